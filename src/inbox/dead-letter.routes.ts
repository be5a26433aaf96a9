import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { fromKysely } from 'pg-boss';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import {
  findIdempotentResponse,
  listAppInbox,
  lockAppRow,
  resetForRequeue,
  saveIdempotentResponse,
} from './inbox.queries.js';
import { WEBHOOK_QUEUE } from './inbox.queue-name.js';
import { INBOX_STATUSES, inboxResource } from './inbox.resource.js';
import { isUuid } from '../http/ids.js';

export const DEAD_LETTER_DEFAULT_LIMIT = 100;
export const DEAD_LETTER_MAX_LIMIT = 500;

/** `/v1/admin/webhook-inbox`: a workspace admin inspects and requeues its own deliveries. */
export const deadLetterRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preHandler', requireAuth(deps, { scope: 'admin' }));

  app.get(
    '/webhook-inbox',
    {
      schema: {
        querystring: Type.Object({
          status: Type.Optional(Type.Union(INBOX_STATUSES.map((s) => Type.Literal(s)))),
          limit: Type.Optional(Type.String()),
        }),
      },
    },
    async (request) => {
      const { appId } = tenantOf(request);
      const raw = Number(request.query.limit);
      const limit = Number.isFinite(raw) && raw >= 1 ? Math.min(Math.floor(raw), DEAD_LETTER_MAX_LIMIT) : DEAD_LETTER_DEFAULT_LIMIT;
      const rows = await listAppInbox(deps.db, appId, request.query.status ?? 'dead_letter', limit);
      return envelope(request, rows.map(inboxResource));
    },
  );

  app.post(
    '/webhook-inbox/:id/requeue',
    { schema: { params: Type.Object({ id: Type.String({ maxLength: 64 }) }), headers: Type.Object({ 'idempotency-key': Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) }) } },
    async (request, reply) => {
      const { appId } = tenantOf(request);
      const { id } = request.params;
      const idempotencyKey = request.headers['idempotency-key'];
      const requestLine = `requeue ${id}`;
      if (!isUuid(id)) throw errors.notFound('webhook inbox row');
      const result = await deps.db.transaction().execute(async (trx) => {
        if (idempotencyKey !== undefined) {
          const seen = await findIdempotentResponse(trx, appId, idempotencyKey);
          if (seen) {
            if (seen.request !== requestLine) throw errors.conflict('this idempotency-key was used for another request');
            return seen.response as { id: string; status: string };
          }
        }
        // Another app's row is not found, never forbidden: its existence is not revealed.
        const row = await lockAppRow(trx, appId, id);
        if (!row) throw errors.notFound('webhook inbox row');
        if (row.status !== 'failed' && row.status !== 'dead_letter') {
          throw errors.conflict(`only failed or dead_letter rows can be requeued; this row is ${row.status}`);
        }
        // The answer is the status before the enqueue: once the job is queued, a worker may
        // move the row on before this request returns (SPEC §3 rule 2).
        const before = { id: row.id, status: row.status };
        await resetForRequeue(trx, row.id, deps.now());
        await deps.boss.send(WEBHOOK_QUEUE, { id: row.id }, { db: fromKysely(trx as Parameters<typeof fromKysely>[0]) });
        if (idempotencyKey !== undefined) {
          await saveIdempotentResponse(trx, { appId, key: idempotencyKey, request: requestLine, statusCode: 200, response: before });
        }
        return before;
      });
      return reply.code(200).send(envelope(request, result));
    },
  );
};
