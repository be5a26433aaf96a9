// `node --import tsx scripts/sla-idle.ts [threads] [seconds]`: what SLA clocks cost at idle
// (docs/sla.md, "Cost"). On a fresh embedded Postgres, with every queue's worker running as
// `--role worker` runs them, it reads the CPU time of this process and of Postgres over
// `seconds` of idle twice: first with no thread, then with `threads` open threads (100,000 by
// default) each under an SLA policy, with their clock jobs waiting (four per thread: warning
// and due time of first response and of resolution, days ahead). Prints both and the
// difference as a share of one core. Nothing is asserted; every figure comes from this run.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createConnection } from '../src/connections/connections.service.js';
import { createDatabase } from '../src/db/database.js';
import { startEmbeddedPostgres } from '../src/db/embedded.js';
import { migrateToLatest } from '../src/db/migrate.js';
import type { Deps } from '../src/deps.js';
import { startBoss } from '../src/jobs/boss.js';
import { createQueues, startWorkers } from '../src/jobs/registry.js';
import { createLogger } from '../src/logger.js';
import { createMetrics } from '../src/metrics.js';
import { SLA_CLOCK_QUEUE } from '../src/sla/sla-clock.enqueue.js';
import { nearestDue, openSla, statusOf } from '../src/sla/sla-state.js';
import { createWorkspace } from '../src/workspaces/workspaces.service.js';
import { postgresCpuMs } from './bench/cpu.js';

const threads = Number(process.argv[2] ?? 100_000);
const seconds = Number(process.argv[3] ?? 60);
const say = (line: string) => process.stdout.write(`${line}\n`);

async function idleCpu(postmasterPid: number): Promise<{ service: number; postgres: number }> {
  const own0 = process.cpuUsage();
  const pg0 = postgresCpuMs(postmasterPid);
  await new Promise((r) => setTimeout(r, seconds * 1000));
  const own = process.cpuUsage(own0);
  return { service: (own.user + own.system) / 1000, postgres: postgresCpuMs(postmasterPid) - pg0 };
}

const share = (ms: number) => `${((ms / (seconds * 1000)) * 100).toFixed(2)} %`;

const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-sla-idle-'));
const pg = await startEmbeddedPostgres(dir);
const postmasterPid = Number(readFileSync(path.join(dir, 'postgres', 'postmaster.pid'), 'utf8').split('\n')[0]);
const database = createDatabase(pg.url, { max: 5, statementTimeoutMillis: 0 });
const { db } = database;
try {
  await migrateToLatest(db);
  const log = createLogger('silent');
  const config = loadConfig({});
  const boss = await startBoss(pg.url, log, { max: 5 });
  const deps = { config, log, db, pool: database.pool, boss, metrics: createMetrics(), now: () => new Date() } as unknown as Deps;
  await createQueues(boss);
  const workers = await startWorkers(deps);
  await new Promise((r) => setTimeout(r, 5000)); // the workers settle into their polling
  const empty = await idleCpu(postmasterPid);
  say(`idle, no thread:            service ${share(empty.service)}, postgres ${share(empty.postgres)} of a core over ${seconds} s`);

  const workspace = await createWorkspace(db, 'SLA bench');
  const connection = await createConnection(
    { db, config, secretKey: Buffer.alloc(32) },
    workspace.id,
    {
      integrationKey: 'sms',
      externalAccountId: '+15550000000',
      name: 'Bench line',
    },
    'operator',
  );
  const policy = await db
    .insertInto('sla_policies')
    .values({ workspace_id: workspace.id, name: 'Bench', position: 0, first_response: 'P7D', resolution: 'P30D', conditions: '{}' })
    .returning('id')
    .executeTakeFirstOrThrow();
  const started = Date.now();
  const state = openSla(
    { id: policy.id, businessHoursOnly: false, targetMs: { firstResponse: 7 * 86_400_000, resolution: 30 * 86_400_000 } },
    null,
    new Date(),
  );
  await sql`
    INSERT INTO contacts (workspace_id, name) SELECT ${workspace.id}, 'Contact ' || g FROM generate_series(1, ${threads}) g`.execute(db);
  await sql`
    INSERT INTO threads (workspace_id, connection_id, contact_id, status, sla, sla_due_at, sla_status)
    SELECT ${workspace.id}, ${connection.id}, c.id, 'open', ${JSON.stringify(state)}::jsonb, ${nearestDue(state)}, ${statusOf(state)}
    FROM contacts c WHERE c.workspace_id = ${workspace.id}`.execute(db);
  const ids = (await db.selectFrom('threads').select('id').where('workspace_id', '=', workspace.id).execute()).map((r) => r.id);
  const moments = [
    ['firstResponse', 'warning', state.clocks.firstResponse!.warnAt],
    ['firstResponse', 'breached', state.clocks.firstResponse!.dueAt],
    ['resolution', 'warning', state.clocks.resolution!.warnAt],
    ['resolution', 'breached', state.clocks.resolution!.dueAt],
  ] as const;
  for (let i = 0; i < ids.length; i += 2500) {
    const jobs = ids
      .slice(i, i + 2500)
      .flatMap((threadId) => moments.map(([target, kind, at]) => ({ data: { threadId, target, kind, at }, startAfter: new Date(at) })));
    await boss.insert(SLA_CLOCK_QUEUE, jobs);
  }
  await sql`ANALYZE`.execute(db);
  say(`seeded ${threads} open threads and ${threads * moments.length} clock jobs in ${((Date.now() - started) / 1000).toFixed(0)} s`);
  await new Promise((r) => setTimeout(r, 5000));
  const full = await idleCpu(postmasterPid);
  say(`idle, ${threads} SLA threads: service ${share(full.service)}, postgres ${share(full.postgres)} of a core over ${seconds} s`);
  say(`added by the clocks:        ${share(full.service + full.postgres - empty.service - empty.postgres)} of one core`);
  await workers.stop();
  await boss.stop({ graceful: false, close: true });
} finally {
  await database.close();
  await pg.stop();
  await rm(dir, { recursive: true, force: true });
}
