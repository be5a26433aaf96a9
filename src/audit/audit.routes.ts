import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { requireAuth, requireOperator, tenantOf } from '../auth/auth.js';
import { readFrom } from '../db/replica.js';
import type { AuditLogTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { CursorQuery, OffsetQuery, parseCursorQuery, parseOffsetQuery } from '../http/pagination.js';
import { CursorPage, Nullable, OffsetPage, StringEnum, Timestamp } from '../http/schemas.js';
import { type AuditFilter, listAuditLog, listAuditLogPage } from './audit.queries.js';

export const AuditEntryResource = Type.Object(
  {
    id: Type.Integer(),
    at: Timestamp,
    actor: Type.Object({
      type: StringEnum(['user', 'api_key', 'operator', 'system'] as const),
      id: Nullable(Type.Integer()),
      name: Nullable(Type.String({ description: "the user's or API key's name as it is now" })),
    }),
    action: Type.String({ description: 'e.g. `sign_in.succeeded`, `user.updated`, `api_key.created` (docs/security.md)' }),
    target: Nullable(
      Type.Object({
        type: Type.String(),
        id: Type.Union([Type.Integer(), Type.String()], { description: "the target's own id, as its resource answers it (an integer)" }),
      }),
    ),
    ip: Nullable(Type.String()),
    changes: Nullable(
      Type.Record(Type.String(), Type.Unknown(), { description: 'field → `{old, new}`; a secret shows `"[set]"`, never its value' }),
    ),
  },
  { title: 'AuditEntry' },
);
export type AuditEntry = Static<typeof AuditEntryResource>;

/** The filters both audit lists take. */
const AuditFilters = {
  actorId: Type.Optional(Type.With(BigId, { description: 'entries of this user (or, with `actorType: api_key`, this API key)' })),
  actorType: Type.Optional(
    StringEnum(['user', 'api_key', 'operator', 'system'] as const, {
      description: 'entries of this kind of actor (`actorId` alone: a user)',
    }),
  ),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'entries of this action, e.g. `sign_in.failed`' })),
  from: Type.Optional(Type.String({ format: 'date-time', description: 'entries at or after' })),
  to: Type.Optional(Type.String({ format: 'date-time', description: 'entries before' })),
};
export const AuditQuery = Type.Object({ ...CursorQuery.properties, ...AuditFilters });

/** A filter given empty (`?actorId=&action=&from=&to=`) filters nothing, as an absent one. */
async function emptyFiltersAbsent(request: FastifyRequest) {
  const query = request.query as Record<string, unknown>;
  for (const name of Object.keys(AuditFilters)) if (query[name] === '') delete query[name];
}
/** The operator's audit log is an operator list: offset pages (SPEC §8.1). */
const OperatorAuditQuery = Type.Object({ ...OffsetQuery.properties, ...AuditFilters });

/** A target's id as its resource answers it: every target has an integer id; the column keeps text. */
const targetId = (stored: string): number | string => (/^[1-9][0-9]{0,15}$/.test(stored) ? Number(stored) : stored);

function auditEntryResource(row: Selectable<AuditLogTable> & { actor_name: string | null }): AuditEntry {
  return {
    id: row.id,
    at: row.at.toISOString(),
    actor: {
      type: row.actor_type,
      id: row.actor_id,
      name: row.actor_type === 'operator' && row.actor_id === null ? 'operator' : row.actor_name,
    },
    action: row.action,
    target: row.target_type === null ? null : { type: row.target_type, id: targetId(row.target_id ?? '') },
    ip: row.ip,
    changes: row.changes,
  };
}

const filterOf = (q: Static<typeof AuditQuery> | Static<typeof OperatorAuditQuery>): AuditFilter => ({
  actorId: q.actorId,
  actorType: q.actorType,
  action: q.action,
  from: q.from === undefined ? undefined : instant(q.from, 'from'),
  to: q.to === undefined ? undefined : instant(q.to, 'to'),
});

/** A bound the schema let through as a date-time that no Date holds (a leap second, `…T23:59:60Z`): a 422 naming it. */
function instant(value: string, field: 'from' | 'to'): Date {
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) throw errors.validation(`${field}: "${value.slice(0, 40)}" is not an instant this service can read`);
  return at;
}

/**
 * The audit log (docs/security.md, "Audit log"): a workspace's admins read theirs, the
 * platform operator reads its own actions. No route changes or deletes an entry.
 */
export const auditRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/audit-log',
    {
      preValidation: [requireAuth(deps, { scope: 'admin' }), emptyFiltersAbsent],
      schema: {
        summary: "The workspace's audit log",
        description:
          'Admins: who did what, newest first (cursor pages); filters `actorId`, `action`, `from`, `to` combine; one given empty filters nothing.',
        querystring: AuditQuery,
        response: { 200: CursorPage(AuditEntryResource) },
      },
    },
    async (request) => {
      const filter = { ...filterOf(request.query), workspaceId: tenantOf(request).workspaceId };
      const page = await listAuditLog(readFrom(deps, request), filter, parseCursorQuery(request.query));
      return envelope(request, page.items.map(auditEntryResource), page.meta);
    },
  );

  app.get(
    '/operator/audit-log',
    {
      preValidation: [requireOperator(deps), emptyFiltersAbsent],
      schema: {
        summary: "The platform operator's own actions",
        description:
          'What the admin key and operator users did (provisioning, operator routes), newest first, in offset pages ' +
          '(`page`, `limit`: default 50, at most 200) like every operator list; the same filters.',
        querystring: OperatorAuditQuery,
        response: { 200: OffsetPage(AuditEntryResource) },
      },
    },
    async (request) => {
      const page = await listAuditLogPage(
        readFrom(deps, request),
        { ...filterOf(request.query), operatorOnly: true },
        parseOffsetQuery(request.query),
      );
      return envelope(request, page.items.map(auditEntryResource), page.meta);
    },
  );
};
