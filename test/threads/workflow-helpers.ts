import type { FastifyInstance } from 'fastify';
import pg from 'pg';
import { afterAll } from 'vitest';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import { REALTIME_CHANNEL, type RealtimeEvent } from '../../src/realtime/publish.js';
import type { TestContext } from '../helpers/app.js';
import { makeUser } from '../helpers/factories.js';

/** Helpers of the conversation-workflow suites (status, assignment, notes). */

/** A user of the workspace, signed in: its row and the headers that carry its JWT. */
export async function signedInUser(
  app: FastifyInstance,
  ctx: TestContext,
  workspaceId: number,
  options: { name?: string; roles?: string[] } = {},
) {
  const { user, password } = await makeUser(ctx.deps, workspaceId, options);
  const res = await app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password, remember: false } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return { user, headers: { authorization: `Bearer ${res.json().access_token as string}` } };
}

/** A contact writes `text` on `connection`, applied as the worker applies a delivery; answers the thread's id. */
export async function inbound(
  ctx: TestContext,
  connection: { integrationKey: string; externalAccountId: string },
  from: string,
  messageId: string,
  text = 'hello',
) {
  await ctx.deps.db.transaction().execute((trx) =>
    applyDeliveries(
      ctx.deps,
      trx,
      [
        {
          deliveryId: messageId,
          integrationKey: connection.integrationKey,
          events: [
            {
              type: 'message',
              externalAccountId: connection.externalAccountId,
              externalMessageId: messageId,
              contact: { externalId: from },
              text,
            },
          ],
        },
      ],
      new Date(),
    ),
  );
  const row = await ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', messageId).executeTakeFirstOrThrow();
  return row.thread_id;
}

/** Every event of the tenant bus from now on, to see what agents are told. */
export async function listenToBus(url: string): Promise<RealtimeEvent[]> {
  const bus = new pg.Client({ connectionString: url });
  await bus.connect();
  const events: RealtimeEvent[] = [];
  bus.on('notification', (n) => events.push(JSON.parse(n.payload!) as RealtimeEvent));
  await bus.query(`LISTEN ${REALTIME_CHANNEL}`);
  afterAll(() => bus.end());
  return events;
}

/** The transcript lines of a thread that are not messages (notes and activity), oldest first. */
export async function transcriptLines(ctx: TestContext, threadId: number) {
  return ctx.deps.db
    .selectFrom('messages')
    .selectAll()
    .where('thread_id', '=', threadId)
    .where('kind', '<>', 'message')
    .orderBy('id')
    .execute();
}
