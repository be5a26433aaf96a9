import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { absorbDeliveries, insertDeliveries, insertEvents } from '../../src/webhooks-out/deliveries.queries.js';
import { ABSORB_AFTER_MS, Dispatcher, ENDPOINT_IN_FLIGHT, WORKSPACE_JOBS } from '../../src/webhooks-out/dispatcher.js';
import { OUTBOUND_QUEUE } from '../../src/webhooks-out/outbound.enqueue.js';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/webhooks.js';

const slow = await startReceiver();
const fast = await startReceiver();
afterAll(() => Promise.all([slow.close(), fast.close()]));
slow.behave('hang');
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({ workers: true, logLines, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const tenant = await makeTenant(ctx.deps);

async function endpoint(url: string, of: { headers: Record<string, string> } = tenant, app = ctx.app) {
  const res = await app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers: of.headers, payload: { url } });
  return res.json().data.id as number;
}

/** A receiver that holds every request until `answer()`, then answers 204. */
async function heldReceiver() {
  const receiver = await startReceiver();
  let answer!: () => void;
  const answered = new Promise<void>((resolve) => {
    answer = resolve;
  });
  receiver.behave(() => answered.then(() => ({ status: 204 })));
  return { receiver, answer };
}

const statusCounts = async (endpointId: number, db = ctx.deps.db) =>
  Object.fromEntries(
    (
      await sql<{
        status: string;
        n: number;
      }>`SELECT status, count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId} GROUP BY status`.execute(db)
    ).rows.map((r) => [r.status, r.n]),
  ) as Record<string, number>;

describe('one slow receiver', () => {
  it('holds at most 10 deliveries in flight, times out after 10 s, and never delays another endpoint', async () => {
    const slowId = await endpoint(`${slow.url}/slow`);
    const fastId = await endpoint(`${fast.url}/fast`);
    const event = (n: number) => ({ type: 'ping' as const, workspaceId: tenant.workspace.id, data: { n } });

    // 1,000 events for the hanging receiver first, then 50 for the fast one.
    await ctx.deps.db.transaction().execute((trx) =>
      deliverEvents(
        ctx.deps.boss,
        trx,
        Array.from({ length: 1000 }, (_, n) => ({ event: event(n), endpointIds: [slowId] })),
        new Date(),
      ),
    );
    await waitFor(async () => slow.received.length === ENDPOINT_IN_FLIGHT, 'the slow endpoint to fill its slots');
    await ctx.deps.db.transaction().execute((trx) =>
      deliverEvents(
        ctx.deps.boss,
        trx,
        Array.from({ length: 50 }, (_, n) => ({ event: event(n), endpointIds: [fastId] })),
        new Date(),
      ),
    );

    await waitFor(async () => (await statusCounts(fastId)).succeeded === 50, 'every fast delivery', 30_000);
    expect(fast.received).toHaveLength(50);
    // Meanwhile the slow endpoint still holds exactly its ten, all unanswered.
    expect(slow.received).toHaveLength(ENDPOINT_IN_FLIGHT);
    expect((await statusCounts(slowId)).pending).toBe(1000);

    // A receiver that never answers fails the attempt at 10 s, and the delivery is retried later.
    const attempt = await waitFor(
      () =>
        ctx.deps.db
          .selectFrom('webhook_attempts')
          .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
          .select('webhook_deliveries.id')
          .where('endpoint_id', '=', slowId)
          .executeTakeFirst(),
      'a timed-out attempt',
      30_000,
    );
    // The oldest deliveries went first; the log is newest first, so the cursor walks to them.
    let timedOut:
      | {
          id: number;
          status: string;
          nextAttemptAt: string | null;
          attempts: { statusCode: number | null; error: string; durationMs: number }[];
        }
      | undefined;
    for (let cursor = ''; !timedOut; ) {
      const res = (
        await ctx.app.inject({
          method: 'GET',
          url: `/v1/webhook-endpoints/${slowId}/deliveries?limit=100${cursor}`,
          headers: tenant.headers,
        })
      ).json();
      timedOut = res.data.find((d: { id: number }) => d.id === attempt.id);
      if (!res.meta.nextCursor) break;
      cursor = `&cursor=${res.meta.nextCursor}`;
    }
    if (!timedOut) throw new Error('the delivery is not in its endpoint’s log');
    expect(timedOut.status).toBe('pending');
    expect(timedOut.attempts[0]).toMatchObject({ statusCode: null, error: 'no answer within 10 s' });
    expect(timedOut.attempts[0]!.durationMs).toBeGreaterThanOrEqual(9_900);
    expect(timedOut.nextAttemptAt).not.toBeNull();
    // The next ten go out as the first ten settle; never more than ten at once.
    await waitFor(async () => slow.received.length >= 2 * ENDPOINT_IN_FLIGHT, 'the next ten', 30_000);
    expect(slow.received.length).toBeLessThanOrEqual(2 * ENDPOINT_IN_FLIGHT);
    await slow.stop();
  }, 60_000);
});

describe('one workspace whose receivers all hang', () => {
  it('holds at most half the dispatcher’s slots: another workspace’s delivery goes out before any of its attempts has even timed out', async () => {
    const hang = await startReceiver();
    const quick = await startReceiver();
    hang.behave('hang');
    try {
      const a = await makeTenant(ctx.deps);
      const b = await makeTenant(ctx.deps);
      const create = async (headers: Record<string, string>, url: string) =>
        (await ctx.app.inject({ method: 'POST', url: '/v1/webhook-endpoints', headers, payload: { url } })).json().data.id as number;
      // Every endpoint the workspace may have, each with a job of ten deliveries that hang 10 s.
      const hanging: number[] = [];
      for (let n = 0; n < 20; n++) hanging.push(await create(a.headers, `${hang.url}/a${n}`));
      const bId = await create(b.headers, `${quick.url}/b`);
      const ping = (workspaceId: number, n: number) => ({ type: 'ping' as const, workspaceId, data: { n } });
      await ctx.deps.db.transaction().execute((trx) =>
        deliverEvents(
          ctx.deps.boss,
          trx,
          hanging.flatMap((id) =>
            Array.from({ length: ENDPOINT_IN_FLIGHT }, (_, n) => ({ event: ping(a.workspace.id, n), endpointIds: [id] })),
          ),
          new Date(),
        ),
      );
      await waitFor(async () => hang.received.length >= WORKSPACE_JOBS * ENDPOINT_IN_FLIGHT, 'the hanging workspace to take its half');

      await ctx.deps.db
        .transaction()
        .execute((trx) => deliverEvents(ctx.deps.boss, trx, [{ event: ping(b.workspace.id, 1), endpointIds: [bId] }], new Date()));
      await waitFor(async () => (await statusCounts(bId)).succeeded === 1, 'the other workspace’s delivery', 30_000);
      // Not one of the hanging attempts has finished (each takes 10 s): the delivery did not
      // wait for a slot to come free.
      const finished = await ctx.deps.db
        .selectFrom('webhook_attempts')
        .innerJoin('webhook_deliveries', 'webhook_deliveries.id', 'webhook_attempts.delivery_id')
        .select('webhook_attempts.id')
        .where('webhook_deliveries.endpoint_id', 'in', hanging)
        .execute();
      expect(finished).toHaveLength(0);
      // Only half the slots: ten endpoints' jobs, ten deliveries each.
      expect(new Set(hang.received.map((r) => r.path)).size).toBe(WORKSPACE_JOBS);
      expect(hang.received).toHaveLength(WORKSPACE_JOBS * ENDPOINT_IN_FLIGHT);
    } finally {
      await Promise.all([hang.close(), quick.close()]);
    }
  }, 60_000);
});

describe('a slow receiver whose events come one commit at a time', () => {
  const ping = (workspaceId: number, n: number) => ({ type: 'ping' as const, workspaceId, data: { n } });
  const jobsOf = async (endpointId: number) =>
    (
      await sql<{ id: string; state: string; retry_count: number; data: { deliveryIds: number[]; eventIds: string[] } }>`
        SELECT id, state, retry_count, data FROM pgboss.job WHERE name = ${OUTBOUND_QUEUE} AND group_id = ${String(endpointId)}`.execute(
        ctx.deps.db,
      )
    ).rows;

  it('still gets ten in flight: the job ahead takes in the deliveries queued behind it, each goes out once, and no job is left to find them gone', async () => {
    const { receiver: held, answer } = await heldReceiver();
    try {
      const tenant = await makeTenant(ctx.deps);
      const id = await endpoint(`${held.url}/held`, tenant);
      // Forty changes, each its own commit and so its own job of one delivery.
      for (let n = 0; n < 40; n++)
        await ctx.deps.db
          .transaction()
          .execute((trx) => deliverEvents(ctx.deps.boss, trx, [{ event: ping(tenant.workspace.id, n), endpointIds: [id] }], new Date()));

      // Every delivery ends up with the one job being worked (the others' jobs deleted), and its
      // lanes send ten, well before the first attempt would time out (10 s): one job at a time
      // each holding one delivery would have sent one.
      const owners = await waitFor(
        async () => {
          const rows = await ctx.deps.db.selectFrom('webhook_deliveries').select('job_id').where('endpoint_id', '=', id).execute();
          const jobs = new Set(rows.map((r) => r.job_id));
          return rows.length === 40 && jobs.size === 1 && held.received.length === ENDPOINT_IN_FLIGHT && jobs;
        },
        'the first job to take in the other 39 and send ten',
        ABSORB_AFTER_MS + 7_000,
      );
      // The one job left names them all: were its process to die, it would come back with all forty.
      const [active] = await jobsOf(id);
      expect(active).toMatchObject({ id: [...owners][0], state: 'active' });
      const all = await ctx.deps.db.selectFrom('webhook_deliveries').select(['id', 'event_id']).where('endpoint_id', '=', id).execute();
      expect(new Set(active!.data.deliveryIds)).toEqual(new Set(all.map((d) => d.id)));
      expect(new Set(active!.data.eventIds)).toEqual(new Set(all.map((d) => d.event_id)));
      expect(await jobsOf(id)).toHaveLength(1);
      expect(held.received).toHaveLength(ENDPOINT_IN_FLIGHT);
      expect((await statusCounts(id)).pending).toBe(40);

      answer();
      await waitFor(async () => (await statusCounts(id)).succeeded === 40, 'every delivery', 30_000);
      const deliveryIds = held.received.map((r) => r.headers['x-service-delivery']);
      expect(deliveryIds).toHaveLength(40);
      expect(new Set(deliveryIds).size).toBe(40);
      expect(new Set(held.received.map((r) => r.json.data.n))).toEqual(new Set(Array.from({ length: 40 }, (_, n) => n)));
      await waitFor(async () => (await jobsOf(id)).every((j) => j.state === 'completed'), 'the job to complete');
      expect(await jobsOf(id)).toHaveLength(1);
    } finally {
      await held.close();
    }
  }, 60_000);

  it('a job that starts late takes in what is queued behind it at once, even for a receiver that answers at once', async () => {
    const quick = await startReceiver();
    try {
      const tenant = await makeTenant(ctx.deps);
      const id = await endpoint(`${quick.url}/quick`, tenant);
      // Thirty jobs of one delivery each, committed together and due for five seconds already.
      const due = new Date(Date.now() - 5 * ABSORB_AFTER_MS);
      await ctx.deps.db.transaction().execute(async (trx) => {
        for (let n = 0; n < 30; n++)
          await deliverEvents(ctx.deps.boss, trx, [{ event: ping(tenant.workspace.id, n), endpointIds: [id] }], due);
      });
      await waitFor(async () => (await statusCounts(id)).succeeded === 30, 'every delivery');
      expect(quick.received).toHaveLength(30);
      // The first job fetched sent them all; the other 29 were deleted, never fetched.
      await waitFor(async () => (await jobsOf(id)).every((j) => j.state === 'completed'), 'the job to complete');
      expect(await jobsOf(id)).toHaveLength(1);
    } finally {
      await quick.close();
    }
  });

  it('a job whose taking in fails is given up: it expires and comes back, and every delivery still goes out once', async () => {
    const { receiver: held, answer } = await heldReceiver();
    try {
      const tenant = await makeTenant(ctx.deps);
      const id = await endpoint(`${held.url}/refused`, tenant);
      // The database refuses to move this endpoint's deliveries from one job to another.
      await sql`
        CREATE FUNCTION refuse_taking_in() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
          IF NEW.status = OLD.status AND NEW.job_id IS DISTINCT FROM OLD.job_id THEN RAISE EXCEPTION 'refused'; END IF;
          RETURN NEW;
        END $$`.execute(ctx.deps.db);
      await sql`
        CREATE TRIGGER refuse_taking_in BEFORE UPDATE ON webhook_deliveries FOR EACH ROW
        WHEN (NEW.endpoint_id = ${sql.lit(id)}) EXECUTE FUNCTION refuse_taking_in()`.execute(ctx.deps.db);
      for (let n = 0; n < 5; n++)
        await ctx.deps.db
          .transaction()
          .execute((trx) => deliverEvents(ctx.deps.boss, trx, [{ event: ping(tenant.workspace.id, n), endpointIds: [id] }], new Date()));
      await waitFor(
        async () => logLines.some((l) => l.msg === 'outbound webhooks: taking in queued deliveries failed' && l.endpointId === id),
        'the job to try taking in',
      );
      await sql`DROP TRIGGER refuse_taking_in ON webhook_deliveries`.execute(ctx.deps.db);
      expect(held.received).toHaveLength(1);

      // Its one attempt is answered and recorded, but the job is not completed: it expires
      // (heartbeats stopped) and comes back to find its delivery settled; the other four,
      // untouched, then go out.
      answer();
      // (Tests run pg-boss without its supervisor, which a worker process runs every 5 s.)
      await waitFor(
        async () => {
          await ctx.deps.boss.supervise(OUTBOUND_QUEUE);
          return (await statusCounts(id)).succeeded === 5;
        },
        'every delivery',
        60_000,
      );
      expect(held.received.map((r) => r.json.data.n).sort()).toEqual([0, 1, 2, 3, 4]);
      await waitFor(async () => (await jobsOf(id)).every((j) => j.state === 'completed'), 'every job to complete');
      // The one given up came back once; those behind it, late by then, may have taken each other in.
      expect((await jobsOf(id)).filter((j) => j.retry_count > 0)).toHaveLength(1);
    } finally {
      await sql`DROP TRIGGER IF EXISTS refuse_taking_in ON webhook_deliveries`.execute(ctx.deps.db);
      await held.close();
    }
  }, 90_000);

  it('takes in the oldest due deliveries behind the job, up to its limit, each with the job it named before', async () => {
    const tenant = await makeTenant(ctx.deps);
    // Deliveries written straight, with no job queued to run them: only the calls below move them.
    const endpointId = await endpoint('http://127.0.0.1:9/none', tenant);
    const since = new Date(Date.now() - 60_000);
    const rows = await ctx.deps.db.transaction().execute(async (trx) => {
      await insertEvents(
        trx,
        Array.from({ length: 6 }, (_, n) => ({
          id: uuid7(since.getTime() + n),
          workspaceId: tenant.workspace.id,
          type: 'ping',
          body: '{}',
        })),
        since,
      );
      const events = await trx
        .selectFrom('webhook_events')
        .select('id')
        .where('workspace_id', '=', tenant.workspace.id)
        .orderBy('id')
        .execute();
      return insertDeliveries(
        trx,
        events.map((e, n) => ({ endpointId, eventId: e.id, jobId: `00000000-0000-4000-8000-00000000000${n}` })),
        since,
      );
    });
    const [own, ...behind] = rows.sort((a, b) => a.id - b.id);
    const take = { endpointId, jobId: own!.job_id, own: [own!.id], since, limit: 3 };
    const first = await absorbDeliveries(ctx.deps.db, take, new Date());
    // The oldest three behind it, each with the job it named before, and what an attempt needs.
    expect(first.map((r) => [r.id, r.previous_job_id, r.job_id, r.event_type])).toEqual(
      behind.slice(0, 3).map((d) => [d.id, d.job_id, own!.job_id, 'ping']),
    );
    // What the job owns already is not taken again; a delivery not yet due (a retry's later
    // attempt) is not taken at all.
    await sql`UPDATE webhook_deliveries SET next_attempt_at = now() + interval '1 hour' WHERE id = ${behind[3]!.id}`.execute(ctx.deps.db);
    const rest = await absorbDeliveries(ctx.deps.db, { ...take, own: [own!.id, ...first.map((r) => r.id)], limit: 10 }, new Date());
    expect(rest.map((r) => [r.id, r.previous_job_id])).toEqual([[behind[4]!.id, behind[4]!.job_id]]);
  });
});

describe('a job that has run most of its queue’s expiry', () => {
  it('stops taking in, so that it ends before pg-boss expires it and hands it out again while it is still worked', async () => {
    // A clock the test moves on: the job's run is measured by it.
    let skew = 0;
    const clocked = await useTestContext({
      workers: true,
      now: () => new Date(Date.now() + skew),
      env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' },
    });
    const at = () => clocked.deps.now();
    const held = await startReceiver();
    let thirdSent!: () => void;
    const third = new Promise<void>((resolve) => {
      thirdSent = resolve;
    });
    // The first two are answered only once the third has gone out.
    held.behave((r) => {
      if (r.json.data.n !== 2) return third.then(() => ({ status: 204 }));
      thirdSent();
      return { status: 204 };
    });
    try {
      const tenant = await makeTenant(clocked.deps);
      const id = await endpoint(`${held.url}/long`, tenant, clocked.app);
      const ping = (n: number) =>
        clocked.deps.db
          .transaction()
          .execute((trx) =>
            deliverEvents(
              clocked.deps.boss,
              trx,
              [{ event: { type: 'ping', workspaceId: tenant.workspace.id, data: { n } }, endpointIds: [id] }],
              at(),
            ),
          );
      const deliveries = () =>
        clocked.deps.db
          .selectFrom('webhook_deliveries')
          .select(['id', 'job_id', 'status'])
          .where('endpoint_id', '=', id)
          .orderBy('id')
          .execute();

      await ping(0);
      await waitFor(async () => held.received.length === 1, 'the first delivery to go out');
      const [first] = await deliveries();
      // While its attempt is out, the job takes in the next one.
      await ping(1);
      await waitFor(
        async () => held.received.length === 2 && (await deliveries()).every((d) => d.job_id === first!.job_id),
        'the second to be taken in',
      );

      // The job has now run as long as its queue's expiry: what comes next is left to its own job.
      const [{ expire_seconds }] = (
        await sql<{ expire_seconds: number }>`SELECT expire_seconds FROM pgboss.job WHERE id = ${first!.job_id}`.execute(clocked.deps.db)
      ).rows as [{ expire_seconds: number }];
      skew += expire_seconds * 1000;
      await ping(2);
      const own = (await deliveries())[2]!.job_id!;
      await waitFor(async () => (await deliveries())[2]!.status === 'succeeded', 'the third delivery', 30_000);
      const jobs = (await sql<{ state: string }>`SELECT state FROM pgboss.job WHERE id = ${own}`.execute(clocked.deps.db)).rows;
      expect(jobs).toEqual([{ state: 'completed' }]);
      expect(held.received.filter((r) => r.json.data.n === 2)).toHaveLength(1);
    } finally {
      await held.close();
    }
  }, 60_000);
});

describe('a worker stopping while a job holds more than it has in flight', () => {
  it('sends nothing more once it stops: its attempts out finish, and the job comes back for the rest', async () => {
    // No workers: the test runs the one dispatcher itself.
    const quiet = await useTestContext({ env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
    const { receiver: held, answer } = await heldReceiver();
    const first = new Dispatcher(quiet.deps);
    first.start();
    let second: Dispatcher | undefined;
    try {
      const tenant = await makeTenant(quiet.deps);
      const id = await endpoint(`${held.url}/stopping`, tenant, quiet.app);
      // One commit of twenty: one job, ten in flight and ten waiting behind them.
      await quiet.deps.db.transaction().execute((trx) =>
        deliverEvents(
          quiet.deps.boss,
          trx,
          Array.from({ length: 20 }, (_, n) => ({
            event: { type: 'ping' as const, workspaceId: tenant.workspace.id, data: { n } },
            endpointIds: [id],
          })),
          new Date(),
        ),
      );
      await waitFor(async () => held.received.length === ENDPOINT_IN_FLIGHT, 'ten in flight');
      const stopped = first.stop();
      answer();
      await stopped;
      // The ten out were answered and recorded; the other ten were never started.
      expect(held.received).toHaveLength(ENDPOINT_IN_FLIGHT);
      expect(await statusCounts(id, quiet.deps.db)).toEqual({ succeeded: 10, pending: 10 });

      // Not completed, the job expires once its heartbeats have stopped and comes back for the ten.
      second = new Dispatcher(quiet.deps);
      second.start();
      await waitFor(
        async () => {
          await quiet.deps.boss.supervise(OUTBOUND_QUEUE);
          return (await statusCounts(id, quiet.deps.db)).succeeded === 20;
        },
        'the other ten',
        60_000,
      );
      const ns = held.received.map((r) => r.json.data.n);
      expect(new Set(ns)).toEqual(new Set(Array.from({ length: 20 }, (_, n) => n)));
      expect(ns).toHaveLength(20);
    } finally {
      await first.stop();
      await second?.stop();
      await held.close();
    }
  }, 90_000);
});
