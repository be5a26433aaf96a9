import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { MAX_ATTEMPTS } from '../../src/jobs/retry-policy.js';
import { type DeliveriesJob, WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { webhookQueue } from '../../src/webhooks-in/inbox.queue.js';
import { processDeliveries } from '../../src/webhooks-in/process-deliveries.js';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { deliverSigned, fixture } from '../helpers/webhooks.js';

const SECRET = 'retry-test-secret';
let clock = new Date('2026-11-22T10:00:00.000Z');
// No workers: the test drives processing itself, with its own clock, so the schedule is
// checked without waiting.
const ctx = await useTestContext({
  now: () => clock,
  env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET } }) },
});
const tenant = await makeTenant(ctx.deps);

async function deliver(body: string): Promise<string> {
  const res = await deliverSigned(ctx, 'whatsapp', body);
  expect(res.statusCode).toBe(200);
  const row = await ctx.deps.db
    .selectFrom('webhook_inbox')
    .select('id')
    .where('raw_body', '=', body)
    .orderBy('created_at', 'desc')
    .executeTakeFirstOrThrow();
  return row.id;
}

const row = (id: string) => ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const scheduled = async (id: string) =>
  (
    await sql<{
      start_after: Date;
    }>`SELECT start_after FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${id} ORDER BY created_on DESC LIMIT 1`.execute(
      ctx.deps.db,
    )
  ).rows[0]!.start_after;

function textFor(account: string, messageId: string, from = '16505551234') {
  const payload = JSON.parse(fixture('whatsapp', 'text-message.json'));
  payload.entry[0].changes[0].value.metadata.phone_number_id = account;
  payload.entry[0].changes[0].value.messages[0].id = messageId;
  payload.entry[0].changes[0].value.messages[0].from = from;
  payload.entry[0].changes[0].value.contacts[0].wa_id = from;
  return JSON.stringify(payload);
}

describe('lastError', () => {
  it('keeps at most 2,000 characters of an error, on the normal failure path', async () => {
    const account = '9'.repeat(5000);
    const id = await deliver(textFor(account, 'wamid.long-account'));
    await processDeliveries(ctx.deps, [id]);
    const r = await row(id);
    expect(r.status).toBe('failed');
    expect(r.last_error).toHaveLength(2000);
    expect(r.last_error).toBe(`no connection for whatsapp account "${account}`.slice(0, 2000));
  });

  it('keeps at most 2,000 characters of an unexpected error recorded against the row alone', async () => {
    const id = await deliver(textFor('555000009', 'wamid.long-error'));
    // The batch's transaction meets an unexpected error with a long message on its first
    // step; the row is then failed alone, in a transaction of its own.
    let calls = 0;
    const failingOnce = () => {
      if (calls++ === 0) throw new Error('z'.repeat(5000));
      return clock;
    };
    const outcome = await processDeliveries({ ...ctx.deps, now: failingOnce }, [id]);
    expect(outcome).toMatchObject({ failed: 1, processed: 0 });
    const r = await row(id);
    expect(r.status).toBe('failed');
    expect(r.last_error).toBe(`processing error: ${'z'.repeat(5000)}`.slice(0, 2000));
  });
});

describe('retry policy (docs/webhooks.md, "States, retries and dead letters")', () => {
  it('retries after 60 s, 5, 15, 30 min, then hourly, and dead-letters after the 8th attempt', async () => {
    const id = await deliver(textFor('555000001', 'wamid.retry-1'));
    const delays: number[] = [];
    for (let attempt = 1; attempt <= MAX_ATTEMPTS; attempt++) {
      const outcome = await processDeliveries(ctx.deps, [id]);
      const r = await row(id);
      expect(r.attempt_count).toBe(attempt);
      expect(r.last_error).toMatch(/no connection for whatsapp account "555000001"/);
      if (attempt < MAX_ATTEMPTS) {
        expect(outcome.failed).toBe(1);
        expect(r.status).toBe('failed');
        const delay = (r.next_retry_at!.getTime() - clock.getTime()) / 1000;
        delays.push(delay);
        expect((await scheduled(id)).getTime()).toBe(r.next_retry_at!.getTime());
        clock = new Date(r.next_retry_at!.getTime());
      } else {
        expect(outcome.deadLettered).toBe(1);
        expect(r).toMatchObject({ status: 'dead_letter', next_retry_at: null });
      }
    }
    expect(delays).toEqual([60, 300, 900, 1800, 3600, 3600, 3600]);
    // a dead-lettered row re-entering the queue is skipped: no more retries
    expect(await processDeliveries(ctx.deps, [id])).toMatchObject({ skipped: 1, processed: 0, failed: 0 });
    expect((await row(id)).attempt_count).toBe(MAX_ATTEMPTS);
  });

  it('keeps one retry schedule after a failed row is requeued and fails again: the older job leaves it alone', async () => {
    const id = await deliver(textFor('555000009', 'wamid.retry-9'));
    const jobs = async () =>
      (
        await sql<{ id: string; data: DeliveriesJob; start_after: Date }>`
          SELECT id, data, start_after FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ? ${id} ORDER BY start_after`.execute(
          ctx.deps.db,
        )
      ).rows;
    await processDeliveries(ctx.deps, [id]);
    const firstRetry = (await row(id)).next_retry_at!;
    // The operator requeues it at once; it fails again 30 s later (the account is still unknown).
    const requeue = await ctx.app.inject({ method: 'POST', url: `/v1/operator/webhook-inbox/${id}/requeue`, headers: adminHeaders() });
    expect(requeue.json().data).toEqual({ id, status: 'failed' });
    clock = new Date(clock.getTime() + 30_000);
    await processDeliveries(ctx.deps, [id]);
    const again = await row(id);
    expect(again).toMatchObject({ status: 'failed', attempt_count: 1 });
    expect(again.next_retry_at!.getTime()).toBe(clock.getTime() + 60_000);

    // The retry scheduled before the requeue comes due first: the row is not retried early.
    const stale = (await jobs()).find((j) => j.start_after.getTime() === firstRetry.getTime())!;
    expect(stale).toBeDefined();
    clock = new Date(firstRetry.getTime());
    await webhookQueue.worker!.handle(ctx.deps, [{ id: stale.id, data: stale.data }]);
    expect(await row(id)).toEqual(again);

    // Its own retry runs on time, and counts as the second attempt.
    const current = (await jobs()).find((j) => j.start_after.getTime() === again.next_retry_at!.getTime())!;
    clock = new Date(again.next_retry_at!.getTime());
    await webhookQueue.worker!.handle(ctx.deps, [{ id: current.id, data: current.data }]);
    const second = await row(id);
    expect(second).toMatchObject({ status: 'failed', attempt_count: 2 });
    expect(second.next_retry_at!.getTime()).toBe(clock.getTime() + 300_000);
  });

  it('completes on a later attempt once the cause is fixed', async () => {
    const id = await deliver(textFor('555000002', 'wamid.retry-2'));
    await processDeliveries(ctx.deps, [id]);
    expect((await row(id)).status).toBe('failed');
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '555000002' });
    await processDeliveries(ctx.deps, [id]);
    const done = await row(id);
    expect(done).toMatchObject({
      status: 'processed',
      attempt_count: 2,
      last_error: null,
      next_retry_at: null,
      app_id: tenant.workspace.appId,
    });
    expect(done.processed_at).toEqual(clock);
  });

  it('treats a duplicate job for a processed row as a no-op', async () => {
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '555000003' });
    const id = await deliver(textFor('555000003', 'wamid.retry-3'));
    expect(await processDeliveries(ctx.deps, [id, id])).toMatchObject({ processed: 1, skipped: 0 });
    const before = await row(id);
    expect(await processDeliveries(ctx.deps, [id])).toMatchObject({ processed: 0, skipped: 1 });
    expect(await row(id)).toEqual(before);
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('external_id', '=', 'wamid.retry-3').execute()).toHaveLength(1);
  });

  it('leaves no half-applied delivery when processing breaks midway, and a later attempt completes it', async () => {
    await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp', externalAccountId: '555000004' });
    const good = await deliver(textFor('555000004', 'wamid.batch-ok'));
    const doomed = await deliver(textFor('555000004', 'wamid.crash', '447700911111'));
    // The fault strikes after the contact and thread are written, while the message is inserted.
    await sql`CREATE FUNCTION crash_on_message() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.external_id = 'wamid.crash' THEN RAISE EXCEPTION 'disk on fire'; END IF; RETURN NEW; END $$`.execute(ctx.deps.db);
    await sql`CREATE TRIGGER crash_on_message BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION crash_on_message()`.execute(
      ctx.deps.db,
    );
    try {
      const outcome = await processDeliveries(ctx.deps, [good, doomed]);
      // the batch fell back to one delivery at a time: the good one went through alone
      expect(outcome).toMatchObject({ processed: 1, failed: 1 });
    } finally {
      await sql`DROP TRIGGER crash_on_message ON messages`.execute(ctx.deps.db);
    }
    expect((await row(good)).status).toBe('processed');
    const failed = await row(doomed);
    expect(failed).toMatchObject({ status: 'failed', attempt_count: 1 });
    expect(failed.last_error).toContain('disk on fire');
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('external_id', '=', 'wamid.crash').execute()).toEqual([]);
    // the doomed delivery's new contact (written before the fault) was rolled back with it
    const handle = () => ctx.deps.db.selectFrom('contact_handles').select('contact_id').where('external_id', '=', '447700911111').execute();
    expect(await handle()).toEqual([]);

    await processDeliveries(ctx.deps, [doomed]);
    expect((await row(doomed)).status).toBe('processed');
    expect(await ctx.deps.db.selectFrom('messages').select('id').where('external_id', '=', 'wamid.crash').execute()).toHaveLength(1);
    expect(await handle()).toHaveLength(1);
  });

  it('fails a validly signed body that is not JSON with a lastError saying why', async () => {
    const body = 'not json at all';
    // whatsapp refuses non-JSON at verification, so store such a row the way another adapter would
    const id = crypto.randomUUID();
    await ctx.deps.db
      .insertInto('webhook_inbox')
      .values({ id, integration_key: 'aggregator', raw_body: body, payload_json: null, event: null })
      .execute();
    await processDeliveries(ctx.deps, [id]);
    expect((await row(id)).last_error).toMatch(/not valid JSON/);
  });
});
