import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { SEND_QUEUE, type SendJob } from '../../src/replies/send-message.enqueue.js';
import { SEND_CLAIM_STALE_MS, sendBatch, sendQueue } from '../../src/replies/send-message.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { waitFor } from '../helpers/webhooks.js';

// No workers: the test runs the send handler itself, as two pg-boss attempts of one job would.
const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({ env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { apiBaseUrl: fake.baseUrls.whatsapp } }) } });
const tenant = await makeTenant(ctx.deps);
const connection = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: '106540352242999',
  credentials: { accessToken: 'EAAG-claim-token' },
});
const SEND_PATH = '/graph/v23.0/106540352242999/messages';
const other = await makeConnection(ctx.deps, tenant.workspace.id, {
  integrationKey: 'whatsapp',
  externalAccountId: '106540352243000',
  credentials: { accessToken: 'EAAG-claim-token-2' },
});
const OTHER_PATH = '/graph/v23.0/106540352243000/messages';

beforeEach(() => fake.reset());

let numbers = 0;
/** A WhatsApp thread with a contact to answer, and an agent's reply to it, `queued`. */
async function queuedReply(on: { id: number } = connection): Promise<number> {
  const wa = `1650555${String(1000 + numbers++)}`;
  const { db } = ctx.deps;
  const contact = await db
    .insertInto('contacts')
    .values({ workspace_id: tenant.workspace.id, name: 'Customer' })
    .returning('id')
    .executeTakeFirstOrThrow();
  await db
    .insertInto('contact_handles')
    .values({ workspace_id: tenant.workspace.id, integration_key: 'whatsapp', external_id: wa, contact_id: contact.id })
    .execute();
  const thread = await db
    .insertInto('threads')
    // The contact wrote just now: the reply window is open.
    .values({
      workspace_id: tenant.workspace.id,
      connection_id: on.id,
      contact_id: contact.id,
      last_message_preview: 'hi',
      last_inbound_at: new Date(),
    })
    .returning('id')
    .executeTakeFirstOrThrow();
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${thread.id}/messages`,
    headers: tenant.headers,
    payload: { text: `reply ${wa}` },
  });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().data.id as number;
}

const handle = (job: SendJob, id = 'job') => sendQueue.worker!.handle(ctx.deps, [{ id, data: job }]);
const messageRow = (id: number) => ctx.deps.db.selectFrom('messages').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
const sends = () => fake.requests.filter((r) => r.path === SEND_PATH);
const jobsOf = async (id: number) => {
  const { rows } = await sql<{ data: SendJob; start_after: Date }>`
    SELECT data, start_after FROM pgboss.job WHERE name = ${SEND_QUEUE} AND (data->>'messageId')::bigint = ${id} ORDER BY created_on`.execute(
    ctx.deps.db,
  );
  return rows;
};

describe('a reply is claimed before it is sent', () => {
  it('a second execution of the job while the first is still sending sends nothing; the message stays queued in the API', async () => {
    const id = await queuedReply();
    let release!: () => void;
    fake.behave(SEND_PATH, { heldUntil: new Promise<void>((resolve) => (release = resolve)) });
    const first = handle({ messageId: id, attempt: 1 }, 'first');
    await waitFor(async () => sends().length === 1, 'the first attempt to reach the provider');
    // In flight: the row is claimed, and the API still says queued.
    const inFlight = await messageRow(id);
    expect(inFlight).toMatchObject({ status: 'queued', send_attempt: 1 });
    expect(inFlight.send_claim_token).toEqual(expect.any(String));
    const api = await ctx.app.inject({ method: 'GET', url: `/v1/threads/${inFlight.thread_id}/messages`, headers: tenant.headers });
    expect(api.json().data[0]).toMatchObject({ id, status: 'queued' });

    // pg-boss hands the same job to a second attempt (a lapsed heartbeat): it must not send.
    let secondDone = false;
    const second = handle({ messageId: id, attempt: 1 }, 'second').finally(() => (secondDone = true));
    await waitFor(async () => secondDone || sends().length > 1, 'the second attempt to finish or send');
    release();
    await Promise.all([first, second]);
    expect(sends()).toHaveLength(1);
    const row = await messageRow(id);
    expect(row).toMatchObject({ status: 'sent', send_claim_token: null, send_claimed_at: null });
    expect(row.external_id).toBe((sends()[0]!.response!.body as { messages: { id: string }[] }).messages[0]!.id);
    // The second attempt left a job to look again once the claim would be stale, in case
    // the holder had died; it finds the message sent and sends nothing.
    const recheck = (await jobsOf(id)).find((j) => j.start_after.getTime() > inFlight.send_claimed_at!.getTime() + SEND_CLAIM_STALE_MS);
    expect(recheck?.data).toEqual({ messageId: id, attempt: 1 });
    await handle(recheck!.data, 'recheck');
    expect(sends()).toHaveLength(1);
  });

  it('a live sender keeps its claim fresh: a send slower than the stale time is never taken over', async () => {
    // Short times stand in for the 20 s stale time and 5 s refresh, in the same proportion.
    const timing = { staleAfterMs: 1500, refreshMs: 200 };
    const id = await queuedReply();
    let release!: () => void;
    fake.behave(SEND_PATH, { heldUntil: new Promise<void>((resolve) => (release = resolve)) });
    const first = sendBatch(ctx.deps, [{ messageId: id, attempt: 1 }], timing);
    await waitFor(async () => sends().length === 1, 'the first attempt to reach the provider');
    const claimedAt = (await messageRow(id)).send_claimed_at!;
    // Past the stale time since the claim was taken, by the database's clock, and refreshed since.
    await waitFor(async () => {
      const { rows } = await sql<{ past: boolean }>`
        SELECT clock_timestamp() > ${claimedAt}::timestamptz + make_interval(secs => ${timing.staleAfterMs / 1000}) AS past`.execute(
        ctx.deps.db,
      );
      return rows[0]!.past && (await messageRow(id)).send_claimed_at!.getTime() > claimedAt.getTime();
    }, 'the stale time to pass while the claim is refreshed');
    await sendBatch(ctx.deps, [{ messageId: id, attempt: 1 }], timing);
    expect(sends()).toHaveLength(1);
    release();
    await first;
    expect(sends()).toHaveLength(1);
    expect(await messageRow(id)).toMatchObject({ status: 'sent', send_claim_token: null });
  });

  it('two executions of one job started at once send it once', async () => {
    const id = await queuedReply();
    await Promise.all([
      handle({ messageId: id, attempt: 1 }, 'a'),
      handle({ messageId: id, attempt: 1 }, 'b'),
      handle({ messageId: id, attempt: 1 }, 'c'),
    ]);
    expect(sends()).toHaveLength(1);
    expect((await messageRow(id)).status).toBe('sent');
  });

  it('a claim older than the send timeout plus the margin was abandoned (its process died mid-send) and is taken over', async () => {
    const id = await queuedReply();
    const dead = '00000000-0000-4000-8000-00000000dead';
    const claimedAt = sql<Date>`clock_timestamp() - make_interval(secs => ${SEND_CLAIM_STALE_MS / 1000 + 1})`;
    await ctx.deps.db
      .updateTable('messages')
      .set({ send_claim_token: dead, send_claimed_at: claimedAt, send_attempt: 1 })
      .where('id', '=', id)
      .execute();
    await handle({ messageId: id, attempt: 1 }, 'retried');
    expect(sends()).toHaveLength(1);
    expect(await messageRow(id)).toMatchObject({ status: 'sent', send_claim_token: null });
  });

  it('a fresh claim of another attempt is left alone, and a look is scheduled for when it would be stale', async () => {
    const id = await queuedReply();
    const other = '00000000-0000-4000-8000-0000000a11fe';
    await ctx.deps.db
      .updateTable('messages')
      .set({ send_claim_token: other, send_claimed_at: sql<Date>`clock_timestamp()`, send_attempt: 1 })
      .where('id', '=', id)
      .execute();
    const before = (await jobsOf(id)).length;
    await handle({ messageId: id, attempt: 1 }, 'retried');
    expect(sends()).toHaveLength(0);
    const row = await messageRow(id);
    expect(row).toMatchObject({ status: 'queued', send_claim_token: other });
    const jobs = await jobsOf(id);
    expect(jobs).toHaveLength(before + 1);
    expect(jobs.at(-1)!.start_after.getTime()).toBeGreaterThan(row.send_claimed_at!.getTime() + SEND_CLAIM_STALE_MS);
  });

  it('a job of an attempt that already ran (its claim released for a retry) sends nothing; the next attempt does', async () => {
    const id = await queuedReply();
    fake.behave(SEND_PATH, 'server-error');
    await handle({ messageId: id, attempt: 1 }, 'first');
    expect(sends()).toHaveLength(1);
    expect(await messageRow(id)).toMatchObject({ status: 'queued', send_claim_token: null, send_attempt: 1 });
    fake.behave(SEND_PATH, 'ok');
    await handle({ messageId: id, attempt: 1 }, 'first-again');
    expect(sends()).toHaveLength(1);
    await handle({ messageId: id, attempt: 2 }, 'second');
    expect(sends()).toHaveLength(2);
    expect((await messageRow(id)).status).toBe('sent');
  });
});

describe('one reply whose outcome cannot be stored never stalls its batch', () => {
  it("a provider's id another message already has: that reply ends sent without it, the others are recorded, none is sent again", async () => {
    const answer = (id: string) => ({ status: 200, body: { messaging_product: 'whatsapp', messages: [{ id }] } });
    fake.behave(SEND_PATH, answer('wamid.taken'));
    const earlier = await queuedReply();
    await handle({ messageId: earlier, attempt: 1 }, 'earlier');
    expect(await messageRow(earlier)).toMatchObject({ status: 'sent', external_id: 'wamid.taken' });

    // The provider answers the same id again (unique per connection), beside two good sends.
    const poisoned = await queuedReply();
    const good = [await queuedReply(other), await queuedReply(other)];
    const batch = [poisoned, ...good].map((messageId, i) => ({ id: `b${i}`, data: { messageId, attempt: 1 } }));
    await sendQueue.worker!.handle(ctx.deps, batch);
    for (const id of good) {
      const row = await messageRow(id);
      expect(row).toMatchObject({ status: 'sent', error: null, send_claim_token: null });
      expect(row.external_id).toMatch(/^wamid\./);
    }
    expect(await messageRow(poisoned)).toMatchObject({
      status: 'sent',
      external_id: null,
      send_claim_token: null,
      error: expect.stringContaining("sent, but the provider's message id could not be stored"),
    });
    expect(sends()).toHaveLength(2);
    expect(fake.requests.filter((r) => r.path === OTHER_PATH)).toHaveLength(2);

    // pg-boss running the batch again (as after a failed commit) sends nothing.
    await sendQueue.worker!.handle(ctx.deps, batch);
    expect(sends()).toHaveLength(2);
    expect(fake.requests.filter((r) => r.path === OTHER_PATH)).toHaveLength(2);
  });

  it("a provider's id too long for its index: sent once without it", async () => {
    const id = await queuedReply();
    // Random, so PostgreSQL cannot compress it under the index's 2704-byte limit.
    const long = `wamid.${randomBytes(2400).toString('base64url')}`;
    fake.behave(SEND_PATH, { status: 200, body: { messaging_product: 'whatsapp', messages: [{ id: long }] } });
    await handle({ messageId: id, attempt: 1 });
    expect(await messageRow(id)).toMatchObject({ status: 'sent', external_id: null, error: expect.stringContaining('index row size') });
    expect(sends()).toHaveLength(1);
  });
});
