import { afterAll, describe, expect, it } from 'vitest';
import { createDatabase } from '../../src/db/database.js';
import { insertEnd, parseLsn, ReadReplica, readFrom } from '../../src/db/replica.js';
import { createLogger } from '../../src/logger.js';
import { openInfrastructure } from '../../src/main.js';
import { createMetrics } from '../../src/metrics.js';
import { publishEvent } from '../../src/realtime/publish.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { adminHeaders, startTestContext, testConfig } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { startStreamingReplica } from '../helpers/replica.js';
import { seedThread } from '../helpers/threads.js';

/**
 * DATABASE_REPLICA_URL against a real streaming standby of a primary of this file's own. Which
 * server a list read is proved by pausing the standby's replay: a row written on the primary
 * then is missing from what the replica shows. The lag is moved by the app's clock, which the
 * replica's probe measures on, so no test waits for real time to pass.
 */
const MAX_LAG_MS = 5_000;
const pair = await startStreamingReplica();
let skew = 0;
const ctx = await startTestContext({
  database: { url: pair.primaryUrl, name: 'inbox', drop: async () => {} },
  env: { DATABASE_URL: pair.primaryUrl, DATABASE_REPLICA_URL: pair.replicaUrl, INBOX_REPLICA_MAX_LAG_MS: String(MAX_LAG_MS) },
  now: () => new Date(Date.now() + skew),
});
afterAll(async () => {
  await ctx.close();
  await pair.stop();
});
const replica = ctx.deps.replica!;

async function contactNames(headers: Record<string, string>): Promise<string[]> {
  const res = await ctx.app.inject({ method: 'GET', url: '/v1/contacts', headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.map((c: { name: string }) => c.name);
}

async function addContact(workspaceId: number, name: string): Promise<number> {
  const row = await ctx.deps.db
    .insertInto('contacts')
    .values({ workspace_id: workspaceId, name, attributes: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  return row.id;
}

async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 20));
}

/** Replay on, and the replica's probe has seen it reach what the primary has now. */
async function resumeAndCatchUp(): Promise<void> {
  await pair.onStandby('SELECT pg_wal_replay_resume()');
  const { rows } = await ctx.deps.pool.query<{ lsn: string }>('SELECT pg_current_wal_insert_lsn()::text AS lsn');
  const target = insertEnd(parseLsn(rows[0]!.lsn));
  await until(async () => {
    const replayed = (await pair.onStandby('SELECT pg_last_wal_replay_lsn()::text AS lsn')).rows[0].lsn as string;
    return parseLsn(replayed) >= target;
  });
  // Then the probe needs a round in which the standby had replayed what the primary had.
  await until(async () => {
    await replica.probe();
    return (replica.lagMs() ?? Number.POSITIVE_INFINITY) < MAX_LAG_MS;
  });
}

async function pauseReplay(): Promise<void> {
  await pair.onStandby('SELECT pg_wal_replay_pause()');
  await until(async () => (await pair.onStandby('SELECT pg_get_wal_replay_pause_state() AS s')).rows[0].s === 'paused');
}

async function metric(line: RegExp): Promise<number> {
  const text = (await ctx.app.inject({ method: 'GET', url: '/metrics' })).body;
  const found = text.split('\n').find((l) => line.test(l));
  return found === undefined ? Number.NaN : Number(found.split(' ').at(-1));
}

describe('a read replica (DATABASE_REPLICA_URL)', () => {
  it('serves lists while it keeps up, and is skipped once it lags beyond INBOX_REPLICA_MAX_LAG_MS', async () => {
    const tenant = await makeTenant(ctx.deps);
    await resumeAndCatchUp();
    await pauseReplay();
    await addContact(tenant.workspace.id, 'Ada');
    const company = await createWorkspace(ctx.deps.db, 'Written while replay is paused');
    await replica.probe();
    expect(replica.lagMs()).toBeLessThan(MAX_LAG_MS);
    // The standby has not replayed the writes: both lists read it.
    expect(await contactNames(tenant.headers)).toEqual([]);
    const tenants = async () => {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/operator/tenants?limit=1000', headers: adminHeaders() });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data.map((w: { id: number }) => w.id);
    };
    expect(await tenants()).not.toContain(company.id);

    skew += MAX_LAG_MS + 1_000;
    const skippedBefore = (await metric(/^inbox_replica_skipped_total\{reason="lag"\}/)) || 0;
    expect(await contactNames(tenant.headers)).toEqual(['Ada']);
    expect(await tenants()).toContain(company.id);
    expect(await metric(/^inbox_replica_skipped_total\{reason="lag"\}/)).toBeGreaterThanOrEqual(skippedBefore + 2);
    expect(await metric(/^inbox_replica_lag_seconds /)).toBeGreaterThan(MAX_LAG_MS / 1000);

    // Caught up again, the replica is read again and shows the writes.
    await resumeAndCatchUp();
    const before = await metric(/^inbox_replica_skipped_total\{reason="lag"\}/);
    expect(await contactNames(tenant.headers)).toEqual(['Ada']);
    expect(await metric(/^inbox_replica_skipped_total\{reason="lag"\}/)).toBe(before);
  });

  it('lets a caller read its own writes at once, while other callers read the lagging replica', async () => {
    const writer = await makeTenant(ctx.deps);
    const other = await makeTenant(ctx.deps);
    const id = await addContact(writer.workspace.id, 'Grace');
    await resumeAndCatchUp();
    await pauseReplay();

    const patched = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/contacts/${id}`,
      headers: writer.headers,
      payload: { name: 'Grace Hopper' },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    expect(patched.json().data.name).toBe('Grace Hopper');
    // The next GET of the same workspace: the replica has not replayed the change, the primary has it.
    expect(await contactNames(writer.headers)).toEqual(['Grace Hopper']);
    expect(await metric(/^inbox_replica_skipped_total\{reason="own_write"\}/)).toBeGreaterThanOrEqual(1);
    // Another workspace still reads the replica: its new contact is not there yet.
    await addContact(other.workspace.id, 'Linus');
    expect(await contactNames(other.headers)).toEqual([]);
    // A request that is not a GET never reads the replica, whatever it reads after its write.
    expect(readFrom(ctx.deps, { method: 'POST', auth: null })).toBe(ctx.deps.db);
    expect(readFrom(ctx.deps, { method: 'GET', auth: null })).toBe(replica.db);

    await resumeAndCatchUp();
    expect(await contactNames(other.headers)).toEqual(['Linus']);
  });

  it('re-reads live lists on the primary after a realtime event, so a refetch is never older than its event', async () => {
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id);
    await resumeAndCatchUp();
    await pauseReplay();
    // A worker's write, announced on the realtime channel: no request of this process made it.
    const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
    await publishEvent(ctx.deps.db, { type: 'thread.updated', workspaceId: tenant.workspace.id, data: { id: thread.id } });
    await until(async () => replica.lastWrite(`changes:${tenant.workspace.id}`) !== undefined);

    const res = await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: tenant.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.map((t: { id: number }) => t.id)).toEqual([thread.id]);
    // Contacts are not re-read on events: they still read the lagging replica.
    expect(await contactNames(tenant.headers)).toEqual([]);
    await resumeAndCatchUp();
  });

  it('keeps the replica as last measured when the primary is too busy to answer a probe', async () => {
    // A primary pool of one connection, held by the test: the probe gets none in time.
    const busy = createDatabase(pair.primaryUrl, { max: 1, connectionTimeoutMillis: 100 });
    const own = new ReadReplica({
      url: pair.replicaUrl,
      primary: busy.pool,
      maxLagMs: MAX_LAG_MS,
      poolMax: 1,
      metrics: createMetrics(),
      log: ctx.deps.log,
      probeIntervalMs: 0,
    });
    try {
      await own.start();
      // Measured once the standby has replayed a position a probe noted.
      await until(async () => {
        await own.probe();
        return own.lagMs() !== undefined;
      });
      const held = await busy.pool.connect();
      await own.probe();
      held.release();
      // Not down: the lag keeps growing from the last round that measured it.
      expect(own.lagMs()).toBeLessThan(MAX_LAG_MS);
      expect(own.usable()).toBe(true);
    } finally {
      await own.close();
      await busy.close();
    }
  });

  it('is opened by the service beside the primary, its pool as large as INBOX_DB_POOL_MAX', async () => {
    const config = testConfig({ DATABASE_URL: pair.primaryUrl, DATABASE_REPLICA_URL: pair.replicaUrl, INBOX_DB_POOL_MAX: '3' });
    const infra = await openInfrastructure(config, createLogger('silent'), { schedule: false });
    try {
      expect(infra.deps.replica?.pool.options.max).toBe(3);
      const text = await infra.deps.metrics.registry.metrics();
      expect(text).toMatch(/^inbox_db_pool_max_connections\{pool="replica"\} 3$/m);
      expect(text).toMatch(/^inbox_replica_up 1$/m);
    } finally {
      await infra.close();
    }
  });

  it('falls back to the primary when the replica is down, without an error, and counts it', async () => {
    const tenant = await makeTenant(ctx.deps);
    await addContact(tenant.workspace.id, 'Barbara');
    await pair.stopStandby();
    await replica.probe();
    expect(replica.lagMs()).toBeUndefined();
    expect(await contactNames(tenant.headers)).toEqual(['Barbara']);
    expect(await metric(/^inbox_replica_skipped_total\{reason="down"\}/)).toBeGreaterThanOrEqual(1);
    expect(await metric(/^inbox_replica_up /)).toBe(0);
  });
});
