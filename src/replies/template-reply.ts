import { type Static, Type } from 'typebox';
import { componentText, countParameters, fillParameters, unfillableComponent } from '../connections/template-parameters.js';
import { findTemplate } from '../connections/templates.queries.js';
import type { Executor } from '../db/database.js';
import { errors } from '../http/errors.js';

const Parameter = Type.String({ minLength: 1, maxLength: 1024 });

/**
 * `{ template: { name, language, parameters?: { header?, body? } } }` in a reply (docs/replies.md).
 * A template without placeholders (Meta's own `hello_world`) may leave `parameters`, or either
 * list, out: an absent list is an empty one, and the counts are checked all the same.
 */
export const TemplateReply = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 512 }),
    language: Type.String({ minLength: 1, maxLength: 20, description: "Meta's code, e.g. en_US" }),
    parameters: Type.Optional(
      Type.Object(
        {
          header: Type.Optional(Type.Array(Parameter, { maxItems: 10, description: "the header's {{n}} in order" })),
          body: Type.Optional(
            Type.Array(Parameter, { maxItems: 100, description: "the body's {{n}} in order; may be left out when there are none" }),
          ),
        },
        { additionalProperties: false, description: 'may be left out for a template without placeholders' },
      ),
    ),
  },
  { additionalProperties: false },
);
export type TemplateReply = Static<typeof TemplateReply>;

/**
 * Checks a template reply against the connection's synced template and answers what is sent
 * (`template` for WhatsApp) and stored (`text`: the body, filled in, as the customer reads it).
 * Every refusal is a 422 that names the template.
 */
export async function prepareTemplateReply(
  db: Executor,
  thread: { connection_id: number; integration_key: string; business_account_id: string | null },
  reply: TemplateReply,
) {
  const named = `template "${reply.name}" (${reply.language})`;
  if (thread.integration_key !== 'whatsapp') throw errors.validation(`${named}: templates can only be sent on whatsapp connections`);
  if (!thread.business_account_id)
    throw errors.validation(`${named}: the connection has no businessAccountId; set it with PATCH /v1/connections/:id, then sync`);
  const template = await findTemplate(db, thread.connection_id, reply.name, reply.language);
  if (!template)
    throw errors.validation(`${named} is not among the connection's synced templates; POST /v1/connections/:id/templates/sync`);
  if (template.status !== 'APPROVED') throw errors.validation(`${named} is ${template.status}, not APPROVED`);
  const unfillable = unfillableComponent(template.components);
  if (unfillable) throw errors.validation(`${named} has ${unfillable}, which a reply cannot fill; send another template`);
  const header = reply.parameters?.header ?? [];
  const headerCount = countParameters(componentText(template.components, 'HEADER'));
  if (header.length !== headerCount) throw errors.validation(`${named} takes ${headerCount} header parameters; ${header.length} given`);
  const body = reply.parameters?.body ?? [];
  if (body.length !== template.parameter_count)
    throw errors.validation(`${named} takes ${template.parameter_count} body parameters; ${body.length} given`);
  const text = fillParameters(componentText(template.components, 'BODY') ?? '', body);
  const asText = (values: string[]) => values.map((v) => ({ type: 'text', text: v }));
  const components = [
    ...(header.length > 0 ? [{ type: 'header', parameters: asText(header) }] : []),
    ...(body.length > 0 ? [{ type: 'body', parameters: asText(body) }] : []),
  ];
  return {
    text: text === '' ? `[template ${reply.name}]` : text,
    template: { name: reply.name, language: { code: reply.language }, components },
  };
}
