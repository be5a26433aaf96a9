import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { ContactHandlesTable, ContactsTable } from '../db/types.js';
import { Nullable, Timestamp } from '../http/schemas.js';

export const ContactResource = Type.Object(
  {
    id: Type.Integer(),
    name: Nullable(Type.String()),
    handles: Type.Array(Type.Object({ integrationKey: Type.String(), externalId: Type.String() })),
    email: Nullable(Type.String()),
    phone: Nullable(Type.String()),
    attributes: Type.Record(Type.String(), Type.Union([Type.String(), Type.Number(), Type.Boolean()]), {
      description: 'a flat object set through PATCH /v1/contacts/:id',
    }),
    createdAt: Timestamp,
  },
  { title: 'Contact' },
);

export function contactResource(
  row: Selectable<ContactsTable>,
  handles: Selectable<ContactHandlesTable>[],
): Static<typeof ContactResource> {
  return {
    id: row.id,
    name: row.name,
    handles: handles.filter((h) => h.contact_id === row.id).map((h) => ({ integrationKey: h.integration_key, externalId: h.external_id })),
    email: row.email,
    phone: row.phone,
    attributes: row.attributes,
    createdAt: row.created_at.toISOString(),
  };
}
