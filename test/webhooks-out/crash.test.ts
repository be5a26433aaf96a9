import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { HEARTBEAT_SECONDS } from '../../src/jobs/queue.js';
import { Dispatcher, ENDPOINT_IN_FLIGHT } from '../../src/webhooks-out/dispatcher.js';
import { OUTBOUND_QUEUE } from '../../src/webhooks-out/outbound.enqueue.js';
import { deliverEvents } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { waitFor } from '../helpers/webhooks.js';

// No workers: each test runs its dispatchers itself, and plays the supervisor (which a worker
// process runs every 5 s) by calling it while it waits.
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({ logLines, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });
const receiver = await startReceiver();
afterAll(() => receiver.close());

/** One commit of pings `from`…`to - 1` to the endpoint: one job of them all. */
const pings = (workspaceId: number, endpointId: number, from: number, to: number) =>
  ctx.deps.db.transaction().execute((trx) =>
    deliverEvents(
      ctx.deps.boss,
      trx,
      Array.from({ length: to - from }, (_, i) => ({
        event: { type: 'ping' as const, workspaceId, data: { n: from + i } },
        endpointIds: [endpointId],
      })),
      new Date(),
    ),
  );

async function endpoint(path: string) {
  const tenant = await makeTenant(ctx.deps);
  const res = await ctx.app.inject({
    method: 'POST',
    url: '/v1/webhook-endpoints',
    headers: tenant.headers,
    payload: { url: `${receiver.url}${path}` },
  });
  return { workspaceId: tenant.workspace.id, id: res.json().data.id as number };
}

const jobsOf = async (endpointId: number) =>
  (
    await sql<{ id: string; state: string; retry_count: number; started_on: Date | null; heartbeat_on: Date | null }>`
      SELECT id, state, retry_count, started_on, heartbeat_on FROM pgboss.job
      WHERE name = ${OUTBOUND_QUEUE} AND group_id = ${String(endpointId)} ORDER BY id`.execute(ctx.deps.db)
  ).rows;

const succeeded = async (endpointId: number) =>
  (
    await sql<{
      n: number;
    }>`SELECT count(*)::int AS n FROM webhook_deliveries WHERE endpoint_id = ${endpointId} AND status = 'succeeded'`.execute(ctx.deps.db)
  ).rows[0]!.n;

const received = (path: string) => receiver.received.filter((r) => r.path === path).map((r) => ({ n: r.json.data.n as number, at: r.at }));

/** The supervisor's pass, at most every half second, for a waitFor's check. */
let supervised = 0;
async function supervise() {
  if (Date.now() - supervised < 500) return;
  supervised = Date.now();
  await ctx.deps.boss.supervise(OUTBOUND_QUEUE);
}

describe('a worker that dies holding an outbound job', () => {
  it("has its job back within the heartbeat's lapse, ahead of its endpoint's newer jobs", async () => {
    const { workspaceId, id } = await endpoint('/died');
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    // The dead job's five are answered at once; the newer five only once the test says so, as a
    // slow receiver's would: a job of theirs that ran first would hold the endpoint meanwhile.
    receiver.behave((r) => ((r.json.data.n as number) < 5 ? { status: 204 } : released.then(() => ({ status: 204 }))));
    const dispatcher = new Dispatcher(ctx.deps);
    try {
      await pings(workspaceId, id, 0, 5);
      // A worker claims the job and dies: the job stays active, and its heartbeat stops now.
      const [dead] = await ctx.deps.boss.fetch(OUTBOUND_QUEUE);
      const diedAt = Date.now();
      // Meanwhile the endpoint's next change queues a newer job behind it.
      await pings(workspaceId, id, 5, 10);
      dispatcher.start();

      // Its heartbeat lapses HEARTBEAT_SECONDS after the claim; the supervisor's pass (every
      // half second here, every 5 s in a worker) then hands it out again. Due at once, it is
      // fetched ahead of the newer job, which would otherwise hold the endpoint with its five.
      await waitFor(
        async () => {
          await supervise();
          return received('/died').filter((r) => r.n < 5).length === 5;
        },
        "the dead job's five, within the heartbeat's lapse",
        (HEARTBEAT_SECONDS + 5) * 1000,
      );
      const back = received('/died').filter((r) => r.n < 5);
      expect(back.map((r) => r.n).sort()).toEqual([0, 1, 2, 3, 4]);
      expect(Math.max(...back.map((r) => r.at)) - diedAt).toBeLessThan((HEARTBEAT_SECONDS + 3) * 1000);
      expect((await jobsOf(id)).find((j) => j.id === dead!.id)).toMatchObject({ retry_count: 1 });

      release();
      await waitFor(async () => received('/died').length === 10, 'the newer five');
      await waitFor(async () => (await jobsOf(id)).every((j) => j.state === 'completed'), 'both jobs to complete');
      expect(
        received('/died')
          .map((r) => r.n)
          .sort((a, b) => a - b),
      ).toEqual(Array.from({ length: 10 }, (_, n) => n));
    } finally {
      release();
      await dispatcher.stop();
    }
  }, 60_000);

  it('a live job that runs past the lapse is kept by its heartbeat: no other worker takes it and nothing goes out twice', async () => {
    const { workspaceId, id } = await endpoint('/long');
    // Forty in one job, ten at a time, each answered after 4 s: the job runs some 16 s, past
    // the heartbeat's lapse, with every attempt well inside its 10 s deadline.
    receiver.behave(() => new Promise((resolve) => setTimeout(() => resolve({ status: 204 }), 4_000)));
    // Two workers: either may hold the job, and the other would take it were it handed out again.
    const one = new Dispatcher(ctx.deps);
    const other = new Dispatcher(ctx.deps);
    one.start();
    other.start();
    try {
      await pings(workspaceId, id, 0, 40);
      // Past the heartbeat's lapse while the supervisor looks: only a heartbeat refreshed
      // meanwhile keeps the job.
      const job = await waitFor(
        async () => {
          await supervise();
          const [j] = await jobsOf(id);
          const kept = j?.state === 'active' && j.heartbeat_on!.getTime() - j.started_on!.getTime() > HEARTBEAT_SECONDS * 1000;
          return (kept || (j?.started_on && j.state !== 'active') || j?.retry_count || received('/long').length > 40) && j;
        },
        'the job to run past the lapse',
        (HEARTBEAT_SECONDS + 15) * 1000,
      );
      expect(job).toMatchObject({ state: 'active', retry_count: 0 });

      await waitFor(async () => (await jobsOf(id)).every((j) => j.state === 'completed'), 'the job to complete', 30_000);
      expect(
        received('/long')
          .map((r) => r.n)
          .sort((a, b) => a - b),
      ).toEqual(Array.from({ length: 40 }, (_, n) => n));
      expect(await jobsOf(id)).toMatchObject([{ retry_count: 0 }]);
    } finally {
      await one.stop();
      await other.stop();
    }
  }, 60_000);

  it('a live job whose claim was taken away starts no more attempts: only those it had out went', async () => {
    const { workspaceId, id } = await endpoint('/lost');
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    receiver.behave(() => released.then(() => ({ status: 204 })));
    const dispatcher = new Dispatcher(ctx.deps);
    dispatcher.start();
    try {
      await pings(workspaceId, id, 0, 30);
      await waitFor(async () => received('/lost').length === ENDPOINT_IN_FLIGHT, 'ten in flight');
      // Its heartbeat lapses as if this process had lost the database, and the supervisor takes
      // the job away: failed for good here, so that no worker fetches it and whatever goes out
      // is this process's.
      const [job] = await jobsOf(id);
      await sql`UPDATE pgboss.job SET heartbeat_on = now() - interval '1 minute', retry_limit = 0
        WHERE name = ${OUTBOUND_QUEUE} AND id = ${job!.id}`.execute(ctx.deps.db);
      await waitFor(async () => {
        await supervise();
        return (await jobsOf(id))[0]!.state === 'failed';
      }, 'the supervisor to take the job away');
      await waitFor(
        async () => logLines.some((l) => l.jobId === job!.id && String(l.msg).includes('starts no more attempts')),
        'its next heartbeat to find it gone',
        HEARTBEAT_SECONDS * 1000,
      );

      // The ten out are answered and recorded; none of the other twenty is started.
      release();
      await waitFor(async () => (await succeeded(id)) >= ENDPOINT_IN_FLIGHT, 'the ten out to be recorded');
      await dispatcher.stop();
      expect(received('/lost')).toHaveLength(ENDPOINT_IN_FLIGHT);
    } finally {
      release();
      await dispatcher.stop();
    }
  });
});
