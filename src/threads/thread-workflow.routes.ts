import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { changeThreadWithRules } from '../automation/change-thread.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { Envelope, Nullable, StringEnum } from '../http/schemas.js';
import { MAX_LABELS, markThreadRead } from './thread-workflow.service.js';
import { THREAD_PRIORITIES, THREAD_STATUSES, ThreadResource } from './threads.resources.js';

const ThreadParams = Type.Object({ id: Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "the thread's id" }) });

export const ThreadPatchBody = Type.Object(
  {
    status: Type.Optional(StringEnum(THREAD_STATUSES, { description: '"snoozed" needs a future snoozedUntil' })),
    assigneeId: Type.Optional(
      Nullable(Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'a user of the workspace; null unassigns' })),
    ),
    snoozedUntil: Type.Optional(
      Nullable(Type.String({ format: 'date-time', description: 'when a snoozed thread opens again; in the future' })),
    ),
    teamId: Type.Optional(
      Nullable(
        Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'a team of the workspace; null takes the thread out of its team' }),
      ),
    ),
    priority: Type.Optional(StringEnum(THREAD_PRIORITIES, { description: 'low, normal, high or urgent; SLA policies may match it' })),
    labels: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 50, pattern: '^[A-Za-z0-9_:-]+$' }), {
        maxItems: MAX_LABELS,
        description: 'the whole set: at most 20, each 1–50 of a-z 0-9 - _ : (lower-cased)',
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/**
 * Working a conversation (docs/conversations.md): `PATCH /v1/threads/:id` changes status,
 * snooze, assignee and labels; `POST /v1/threads/:id/read` marks it read. Users and keys with
 * the `write` scope; another workspace's thread is `not_found`.
 */
export const threadWorkflowRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.patch(
    '/threads/:id',
    {
      preValidation: requireAuth(deps),
      schema: {
        summary: "Change a thread's status, snooze, assignee, team, priority or labels",
        params: ThreadParams,
        body: ThreadPatchBody,
        response: { 200: Envelope(ThreadResource) },
      },
    },
    async (request) => envelope(request, await changeThreadWithRules(deps, tenantOf(request), request.params.id, request.body)),
  );

  app.post(
    '/threads/:id/read',
    {
      preValidation: requireAuth(deps),
      schema: {
        summary: 'Mark a thread read: agentLastSeenAt is now and unreadCount 0',
        params: ThreadParams,
        response: { 200: Envelope(ThreadResource) },
      },
    },
    async (request) => envelope(request, await markThreadRead(deps, tenantOf(request), request.params.id)),
  );
};
