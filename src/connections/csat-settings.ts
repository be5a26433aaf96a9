import { Type } from 'typebox';
import { errors } from '../http/errors.js';
import { Nullable } from '../http/schemas.js';
import { RECEIVE_ONLY } from '../replies/send-policy.js';

/** The question a survey asks when the connection sets none. */
export const DEFAULT_CSAT_QUESTION = 'How would you rate the help you received? Tell us in one click:';

const CsatQuestion = Type.String({
  minLength: 1,
  maxLength: 500,
  description: 'what the survey message says before its link; null = the default question',
});

/** `csat` on create and PATCH (docs/reports.md, "CSAT"). */
export const CsatSettingInput = Type.Object(
  {
    enabled: Type.Boolean({ description: "a user's resolution of a conversation that had a reply sends the contact the survey" }),
    question: Type.Optional(Nullable(CsatQuestion)),
  },
  { additionalProperties: false },
);

/** `csat` in a connection answer. */
export const CsatSetting = Type.Object(
  { enabled: Type.Boolean(), question: Nullable(Type.String({ description: 'null = the default question' })) },
  { description: 'CSAT survey after a resolution (docs/reports.md, "CSAT")' },
);

/** The columns to write of the setting given: the question trimmed (blank = the default). */
export interface CsatColumns {
  csatEnabled?: boolean;
  csatQuestion?: string | null;
}

/**
 * What to store of `csat`; 422 where nothing can be sent. `question` left out keeps the one
 * set before.
 */
export function checkCsatSetting(integrationKey: string, input: { enabled: boolean; question?: string | null } | undefined): CsatColumns {
  if (input === undefined) return {};
  if (input.enabled && RECEIVE_ONLY.has(integrationKey))
    throw errors.validation(`csat: a ${integrationKey} connection cannot send a survey`);
  return {
    csatEnabled: input.enabled,
    ...(input.question === undefined ? {} : { csatQuestion: input.question === null ? null : input.question.trim() || null }),
  };
}
