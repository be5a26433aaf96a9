import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { MacrosTable } from '../db/types.js';
import { Nullable, Timestamp } from '../http/schemas.js';
import { MAX_ACTIONS, RuleActionSchema } from './rule-actions.resources.js';

export const MacroResource = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    actions: Type.Array(RuleActionSchema),
    shared: Type.Boolean({ description: 'false: only its author sees and runs it' }),
    authorId: Nullable(Type.Integer()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  },
  { title: 'Macro' },
);
export type Macro = Static<typeof MacroResource>;

const fields = {
  name: Type.String({ minLength: 1, maxLength: 100 }),
  actions: Type.Array(RuleActionSchema, { minItems: 1, maxItems: MAX_ACTIONS }),
  shared: Type.Boolean(),
};
export const MacroCreate = Type.Object(
  { name: fields.name, actions: fields.actions, shared: Type.Optional(fields.shared) },
  { additionalProperties: false },
);
export const MacroPatch = Type.Partial(Type.Object(fields), { additionalProperties: false, minProperties: 1 });

export function macroResource(row: Selectable<MacrosTable>): Macro {
  return {
    id: row.id,
    name: row.name,
    actions: row.actions as Macro['actions'],
    shared: row.shared,
    authorId: row.author_id,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}
