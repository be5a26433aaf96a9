import { sql } from 'kysely';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { HEARTBEAT_SECONDS } from '../../src/jobs/queue.js';
import { createQueues } from '../../src/jobs/registry.js';
import { WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { processDeliveries, RECHECK_LOCKED_SECONDS } from '../../src/webhooks-in/process-deliveries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture } from '../helpers/webhooks.js';

/**
 * A worker whose heartbeat lapsed may still hold a delivery's row in an open transaction when
 * the supervisor hands its job to another attempt. These tests play the first attempt with a
 * second connection that locks the row, and run the second attempt for real.
 */
const SECRET = 'overlap-test-secret';
const ctx = await useTestContext({ env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET } }) } });
const tenant = await makeTenant(ctx.deps);
await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '106540352242922' });

let sequence = 0;
async function deliver(): Promise<{ rowId: string; messageId: string }> {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  const messageId = `wamid.overlap.${++sequence}`;
  payload.entry[0].changes[0].value.messages[0].id = messageId;
  const res = await deliverSigned(ctx, 'whatsapp', payload);
  expect(res.statusCode).toBe(200);
  const row = await ctx.deps.db.selectFrom('webhook_inbox').select('id').orderBy('created_at', 'desc').limit(1).executeTakeFirstOrThrow();
  return { rowId: row.id, messageId };
}

/** Another attempt's transaction, holding the row locked until told to commit or roll back. */
async function holdRow(rowId: string, work?: string) {
  const other = new pg.Client({ connectionString: ctx.database.url });
  await other.connect();
  await other.query('BEGIN');
  await other.query('SELECT id FROM webhook_inbox WHERE id = $1 FOR UPDATE', [rowId]);
  if (work) await other.query(work, [rowId]);
  return {
    commit: () => other.query('COMMIT').then(() => other.end()),
    rollback: () => other.query('ROLLBACK').then(() => other.end()),
  };
}

async function jobsFor(rowId: string) {
  const { rows } = await sql<{ startAfter: Date }>`
    SELECT start_after AS "startAfter" FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${rowId}`.execute(ctx.deps.db);
  return rows;
}

const messagesOf = async (externalId: string) =>
  (await ctx.deps.db.selectFrom('messages').select('id').where('external_id', '=', externalId).execute()).length;

describe('two attempts of one delivery at once', () => {
  it('looks again later at a row another attempt holds, and processes it once that attempt rolled back', async () => {
    const { rowId, messageId } = await deliver();
    const first = await holdRow(rowId);
    const outcome = await processDeliveries(ctx.deps, [rowId]);
    expect(outcome).toMatchObject({ processed: 0, skipped: 1 });
    // The ingestion job, and one to look again after RECHECK_LOCKED_SECONDS.
    const jobs = await jobsFor(rowId);
    expect(jobs).toHaveLength(2);
    const later = Math.max(...jobs.map((j) => j.startAfter.getTime()));
    expect(later - Date.now()).toBeGreaterThan((RECHECK_LOCKED_SECONDS - 5) * 1000);

    await first.rollback();
    // What the recheck job runs when it comes due.
    expect(await processDeliveries(ctx.deps, [rowId])).toMatchObject({ processed: 1 });
    expect(await messagesOf(messageId)).toBe(1);
    const row = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select(['status', 'attempt_count'])
      .where('id', '=', rowId)
      .executeTakeFirstOrThrow();
    expect(row).toEqual({ status: 'processed', attempt_count: 1 });
  });

  it('finds nothing to do on the recheck when the other attempt committed', async () => {
    const { rowId } = await deliver();
    const first = await holdRow(
      rowId,
      `UPDATE webhook_inbox SET status = 'processed', attempt_count = 1, processed_at = now() WHERE id = $1`,
    );
    await processDeliveries(ctx.deps, [rowId]);
    await first.commit();
    expect(await processDeliveries(ctx.deps, [rowId])).toMatchObject({ processed: 0, skipped: 1 });
    // Only the ingestion job and the one recheck: a processed row is never looked at again.
    expect(await jobsFor(rowId)).toHaveLength(2);
  });

  it('schedules nothing more for a row that is simply done', async () => {
    const { rowId, messageId } = await deliver();
    await processDeliveries(ctx.deps, [rowId]);
    expect(await processDeliveries(ctx.deps, [rowId])).toMatchObject({ processed: 0, skipped: 1 });
    expect(await jobsFor(rowId)).toHaveLength(1);
    expect(await messagesOf(messageId)).toBe(1);
  });
});

describe('queue options', () => {
  it('brings a queue created by an older version to the options its definition says', async () => {
    await ctx.deps.boss.updateQueue(WEBHOOK_QUEUE, { heartbeatSeconds: null, retryDelay: 5 });
    expect(await ctx.deps.boss.getQueue(WEBHOOK_QUEUE)).toMatchObject({ heartbeatSeconds: null, retryDelay: 5 });
    await createQueues(ctx.deps.boss);
    expect(await ctx.deps.boss.getQueue(WEBHOOK_QUEUE)).toMatchObject({ heartbeatSeconds: HEARTBEAT_SECONDS, retryDelay: 1 });
  });
});
