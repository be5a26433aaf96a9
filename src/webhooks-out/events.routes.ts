import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { decodeLogPosition, parseCursorLimit } from '../http/pagination.js';
import { CursorPage, Timestamp } from '../http/schemas.js';
import { SUBSCRIBABLE_EVENT_TYPES } from '../messaging/events.js';
import { listEventLog } from './events.queries.js';

const EventResource = Type.Object(
  {
    id: Type.String({ description: 'evt_…: the id every delivery of the event carried' }),
    type: Type.String(),
    createdAt: Timestamp,
    workspaceId: Type.Integer(),
    data: Type.Unknown({ description: "the event's data, as webhooks deliver it" }),
  },
  { title: 'Event' },
);

const EventsQuery = Type.Object({
  after: Type.Optional(Type.String({ description: 'meta.nextCursor of the last page read; absent: from the oldest event kept' })),
  types: Type.Optional(Type.String({ description: 'a comma list of event types; absent or empty: every type' })),
  limit: Type.Optional(Type.String({ description: 'page size: default 25, at most 100 (larger is clamped)' })),
});

/**
 * `GET /v1/events`: the workspace's event log (docs/outbound-webhooks.md, "Event log"): every
 * event its outbound webhooks carry, with the same ids and bodies, oldest first, kept for
 * INBOX_RETENTION_DAYS whether or not an endpoint exists. Workspace admins only, like the
 * endpoints: the log carries every message of the workspace.
 */
export const eventsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/events',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: 'Replay outbound events',
        description:
          'Oldest first. Pass `meta.nextCursor` back as `after`: it is the position after the last event of the page, present ' +
          'whenever the page holds one; an empty page (no `nextCursor`) means nothing new yet: keep the cursor you have and ask again later.',
        querystring: EventsQuery,
        response: { 200: CursorPage(EventResource) },
      },
    },
    async (request) => {
      // `types=` (or a list with an empty item) names no type: an empty list filters nothing.
      const named = request.query.types
        ?.split(',')
        .map((t) => t.trim())
        .filter((t) => t !== '');
      const types = named && named.length > 0 ? named : undefined;
      const unknown = types?.find((t) => !(SUBSCRIBABLE_EVENT_TYPES as readonly string[]).includes(t));
      if (unknown !== undefined) throw errors.validation(`types: unknown event type "${unknown.slice(0, 60)}"`);
      const after = request.query.after ? decodeLogPosition(request.query.after) : undefined;
      const page = await listEventLog(
        deps.db,
        tenantOf(request).workspaceId,
        { limit: parseCursorLimit(request.query.limit), after },
        types,
      );
      return envelope(
        request,
        page.items.map((row) => JSON.parse(row.body)),
        page.meta,
      );
    },
  );
};
