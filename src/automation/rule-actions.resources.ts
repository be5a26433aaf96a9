import { Type } from 'typebox';
import { IntId } from '../http/ids.js';
import { StringEnum } from '../http/schemas.js';
import { TemplateReply } from '../replies/template-reply.js';
import { THREAD_PRIORITIES, THREAD_STATUSES } from '../threads/threads.resources.js';

/** At most this many actions in a rule or a macro: the work one firing may do is bounded. */
export const MAX_ACTIONS = 10;
/** The longest text a `reply` or `note` action carries. */
export const ACTION_TEXT_MAX = 4096;

const Labels = Type.Array(Type.String({ minLength: 1, maxLength: 50 }), { minItems: 1, maxItems: 20 });
const Text = Type.String({
  minLength: 1,
  maxLength: ACTION_TEXT_MAX,
  description: 'canned-response variables such as {{contact.name}} are filled in',
});
const strict = { additionalProperties: false } as const;
/** What a rule or a macro does to a thread, each through the same code as the API (docs/automation.md). */
export const RuleActionSchema = Type.Union(
  [
    Type.Object({ type: Type.Literal('assign_user'), userId: IntId }, strict),
    Type.Object({ type: Type.Literal('assign_team'), teamId: IntId }, strict),
    Type.Object(
      { type: Type.Literal('route') },
      { ...strict, description: 'route the thread as availability routing does (docs/teams.md)' },
    ),
    Type.Object({ type: Type.Literal('add_labels'), labels: Labels }, strict),
    Type.Object({ type: Type.Literal('remove_labels'), labels: Labels }, strict),
    Type.Object(
      {
        type: Type.Literal('set_status'),
        status: StringEnum(THREAD_STATUSES),
        snoozeMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 525_600, description: 'with status snoozed: how long' })),
      },
      strict,
    ),
    Type.Object({ type: Type.Literal('set_priority'), priority: StringEnum(THREAD_PRIORITIES) }, strict),
    Type.Object(
      { type: Type.Literal('reply'), text: Type.Optional(Text), template: Type.Optional(TemplateReply) },
      { ...strict, description: 'a reply to the contact: text or a template' },
    ),
    Type.Object({ type: Type.Literal('note'), text: Text }, { ...strict, description: 'a private note' }),
  ],
  { title: 'RuleAction' },
);
export const RuleActions = Type.Array(RuleActionSchema, { maxItems: MAX_ACTIONS });
