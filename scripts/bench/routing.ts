// `--routing`: what routing costs processing. Two workspaces alike in everything (50 agents in
// 5 teams of 10, five connections, one per team, new threads starting in the connection's
// team) but `autoAssign` on the teams of one; the same kind of batches (--routing-new percent
// of the messages from new contacts, who open threads; the rest from contacts of this run who
// wrote before) are applied to each through the workers' own entry, applyDeliveries, one
// transaction per batch (--routing-batch messages: 20 by default, as under a light load; a
// worker draining a backlog applies about 150 at once), in this one process. Without routing, the new threads are assigned by
// hand between batches (untimed), so the messages that follow tell an assignee on both sides:
// what is compared is routing itself (its lock, pool, assignment, activity line and
// notification). Each run starts with every thread resolved, so open threads per agent stay
// what a run makes, not the bench's sum. Runs alternate (routing first in odd rounds, last in
// even ones) so the machine's drift falls on both; each round's ratio is routing's throughput
// over no routing's, reported as the median with the lowest and highest. Only the apply step
// is timed, not fetching or parsing inbox rows, so routing's share of a worker's whole drain
// is smaller than the figure shown.
// `--routing-drain` adds processing as a whole: the same mix of --routing-events deliveries
// stored (rows and jobs, as the api stores them) and drained by a real `--role worker` of the
// build, into two more workspaces alike but for `autoAssign`, in turn (which goes first
// alternates); its figure is deliveries per second from the first processed batch to the
// last (the rows' own processed_at, as the compare's drain). There is no between-batches
// moment in a drain, so the side without routing has its new threads given an agent as they
// are inserted (a trigger of the bench, round-robin over the agents), so both sides tell an
// assignee of every message; with --compare, each round drains with both builds' workers.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createConnection } from '../../src/connections/connections.service.js';
import { uuid7 } from '../../src/crypto/uuid7.js';
import type { Database, Db } from '../../src/db/database.js';
import type { Deps } from '../../src/deps.js';
import { startBoss } from '../../src/jobs/boss.js';
import { createQueues } from '../../src/jobs/registry.js';
import { createLogger } from '../../src/logger.js';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import type { DeliveryEvents } from '../../src/messaging/apply-plan.js';
import { deliveriesJobStatement, JOB_DELIVERIES } from '../../src/webhooks-in/inbox.enqueue.js';
import { storeDeliveries as storeRows } from '../../src/webhooks-in/inbox.queries.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { median, say, serve, waitForDrain } from './common.js';
import type { Build } from './compare.js';
import type { BenchOptions } from './options.js';

const AGENTS = 50;
const TEAMS = 5;

interface Side {
  label: 'routing' | 'no routing';
  workspaceId: number;
  accounts: string[];
  /** Contacts that wrote so far in this run, who write again in its later batches. */
  contacts: number;
  run: number;
}

async function seedSide(db: Db, label: Side['label'], autoAssign: boolean): Promise<Side> {
  const workspace = await createWorkspace(db, `Routing bench (${label})`);
  const config = loadConfig({});
  const accounts: string[] = [];
  const { rows: users } = await sql<{ id: number }>`
    INSERT INTO users (workspace_id, name, email, password_hash, roles)
    SELECT ${workspace.id}, 'Agent ' || g, 'agent-' || g || '-' || ${workspace.id} || '@bench.example', 'x', ARRAY['agent']
    FROM generate_series(1, ${AGENTS}) g
    RETURNING id`.execute(db);
  for (let t = 0; t < TEAMS; t++) {
    const { rows } = await sql<{ id: number }>`
      INSERT INTO teams (workspace_id, name, auto_assign) VALUES (${workspace.id}, ${`Team ${t + 1}`}, ${autoAssign}) RETURNING id`.execute(
      db,
    );
    const teamId = rows[0]!.id;
    const members = users.slice((t * AGENTS) / TEAMS, ((t + 1) * AGENTS) / TEAMS).map((u) => u.id);
    await sql`INSERT INTO team_members (team_id, user_id) SELECT ${teamId}, unnest(${members}::int[])`.execute(db);
    const account = `bench-${label === 'routing' ? 'r' : 'n'}-${t}-${randomBytes(3).toString('hex')}`;
    const connection = await createConnection(
      { db, config, secretKey: randomBytes(32) },
      workspace.id,
      { integrationKey: 'sms', externalAccountId: account, name: `Line ${t + 1}` },
      'operator',
    );
    await db.updateTable('connections').set({ team_id: teamId }).where('id', '=', connection.id).execute();
    accounts.push(account);
  }
  return { label, workspaceId: workspace.id, accounts, contacts: 0, run: 0 };
}

let sequence = 0;

/** `size` messages: one in `every` from a new contact (who opens a thread), the rest from contacts who wrote before. */
function messagesOf(side: Side, every: number, size: number) {
  const events = [];
  for (let i = 0; i < size; i++) {
    sequence++;
    const again = sequence % every !== 0 && side.contacts > 0;
    const contact = again ? (sequence * 7919) % side.contacts : side.contacts++;
    events.push({
      type: 'message' as const,
      externalAccountId: side.accounts[contact % TEAMS]!,
      externalMessageId: `bench-routing-${side.workspaceId}-${sequence}`,
      contact: { externalId: `+1${String(side.run).padStart(3, '0')}${String(contact).padStart(7, '0')}`, name: `Customer ${contact}` },
      text: `Message ${sequence}: where is my order?`,
    });
  }
  return events;
}

/** One batch of messagesOf, as a worker hands it to applyDeliveries. */
function batchOf(side: Side, every: number, size: number): DeliveryEvents {
  const events = messagesOf(side, every, size);
  return { deliveryId: `bench-routing-${sequence}`, integrationKey: 'sms', events };
}

export interface RoutingFigures {
  agents: number;
  teams: number;
  batches: number;
  eventsPerRun: number;
  /** Messages per transaction. */
  batch: number;
  /** Percent of the messages that open a thread (and are routed). */
  newPercent: number;
  rounds: { routingPerSec: number; plainPerSec: number; ratio: number }[];
  ratio: number;
  lowest: number;
  highest: number;
  assigned: number;
  waiting: number;
}

export async function measureRouting(options: BenchOptions, databaseUrl: string, db: Db): Promise<RoutingFigures> {
  const log = createLogger('warn');
  const boss = await startBoss(databaseUrl, log, { max: 2, supervise: false, schedule: false });
  // No system mailer: notification e-mail queues nothing (docs/teams.md). Applying reads
  // only the queue, the config, the log, the database and the clock of the service's deps.
  const deps = { boss, config: loadConfig({}), log, db, now: () => new Date() } as unknown as Deps;
  try {
    const routing = await seedSide(db, 'routing', true);
    const plain = await seedSide(db, 'no routing', false);
    const batch = options.routingBatch;
    const batches = Math.max(10, Math.round(options.routingEvents / batch));
    const every = Math.max(1, Math.round(100 / options.routingNewPercent));
    const run = async (side: Side) => {
      // Between runs, untimed, the agents resolve what they have: a run starts with nobody
      // holding open threads, as a working day would, not with the whole bench's backlog.
      await sql`UPDATE threads SET status = 'resolved' WHERE workspace_id = ${side.workspaceId} AND status <> 'resolved'`.execute(db);
      await sql`ANALYZE threads`.execute(db);
      side.run += 1;
      side.contacts = 0;
      const work = Array.from({ length: batches }, () => batchOf(side, every, batch));
      let ms = 0;
      for (const d of work) {
        const started = performance.now();
        await db.transaction().execute((trx) => applyDeliveries(deps, trx, [d], new Date()));
        ms += performance.now() - started;
        // Without routing, people take the new threads by hand (untimed), so later messages
        // in them tell an assignee on both sides and only routing itself differs.
        if (side === plain)
          await sql`
            UPDATE threads t SET assignee_id = u.id
            FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM threads
                  WHERE workspace_id = ${side.workspaceId} AND status = 'open' AND assignee_id IS NULL) w,
                 (SELECT id, row_number() OVER (ORDER BY id) AS n FROM users WHERE workspace_id = ${side.workspaceId}) u
            WHERE t.id = w.id AND u.n = (w.n % ${AGENTS}) + 1`.execute(db);
      }
      return (batches * batch) / (ms / 1000);
    };
    // A warm-up of each, untimed: plans cached, tables and indexes in memory.
    await run(routing);
    await run(plain);
    const rounds: RoutingFigures['rounds'] = [];
    for (let r = 0; r < options.rounds; r++) {
      const first = r % 2 === 0 ? routing : plain;
      const a = await run(first);
      const b = await run(first === routing ? plain : routing);
      const [routingPerSec, plainPerSec] = first === routing ? [a, b] : [b, a];
      rounds.push({ routingPerSec: Math.round(routingPerSec), plainPerSec: Math.round(plainPerSec), ratio: routingPerSec / plainPerSec });
      say(`routing round ${r + 1}: routing ${Math.round(routingPerSec)}/s, no routing ${Math.round(plainPerSec)}/s`);
    }
    const ratios = rounds.map((r) => r.ratio);
    const { rows } = await sql<{ assigned: string; waiting: string }>`
      SELECT count(*) FILTER (WHERE assignee_id IS NOT NULL) AS assigned, count(*) FILTER (WHERE assignee_id IS NULL) AS waiting
      FROM threads WHERE workspace_id = ${routing.workspaceId} AND status = 'open'`.execute(db);
    return {
      agents: AGENTS,
      teams: TEAMS,
      batches,
      eventsPerRun: batches * batch,
      batch,
      newPercent: 100 / every,
      rounds,
      ratio: median(ratios),
      lowest: Math.min(...ratios),
      highest: Math.max(...ratios),
      assigned: Number(rows[0]!.assigned),
      waiting: Number(rows[0]!.waiting),
    };
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}

/** A side of the drain whose new threads are given an agent as they are inserted (see the top). */
async function assignByHandOnInsert(db: Db, side: Side) {
  const { rows } = await sql<{ id: number }>`SELECT id FROM users WHERE workspace_id = ${side.workspaceId} ORDER BY id`.execute(db);
  const ids = rows.map((r) => r.id).join(',');
  // A constant array: the trigger costs an array subscript per thread row, no statement.
  await sql
    .raw(`
    CREATE FUNCTION bench_assign_by_hand_${side.workspaceId}() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      NEW.assignee_id := ('{${ids}}'::int[])[NEW.id % ${rows.length} + 1];
      RETURN NEW;
    END $$;
    CREATE TRIGGER bench_assign_by_hand_${side.workspaceId} BEFORE INSERT ON threads FOR EACH ROW
      WHEN (NEW.workspace_id = ${side.workspaceId}) EXECUTE FUNCTION bench_assign_by_hand_${side.workspaceId}()`)
    .execute(db);
}

/** `count` SMS deliveries of the side's mix stored as the api stores them: rows and their jobs, in commits of JOB_DELIVERIES. */
async function storeDeliveries(database: Database, boss: Awaited<ReturnType<typeof startBoss>>, side: Side, every: number, count: number) {
  const ids: string[] = [];
  for (let done = 0; done < count; done += JOB_DELIVERIES) {
    const rows = messagesOf(side, every, Math.min(JOB_DELIVERIES, count - done)).map((m) => {
      const id = uuid7();
      ids.push(id);
      return {
        id,
        integrationKey: 'sms',
        event: 'received',
        rawBody: JSON.stringify({
          MessageSid: m.externalMessageId,
          MessageStatus: 'received',
          From: m.contact.externalId,
          To: m.externalAccountId,
          Body: m.text,
        }),
        verification: 'signed' as const,
      };
    });
    await storeRows(database.pool, rows, await deliveriesJobStatement(boss, rows));
  }
  return ids;
}

export interface RoutingDrainFigures {
  deliveries: number;
  newPercent: number;
  /** Open threads of routing's last drain: given an agent by routing, and waiting. */
  assigned: number;
  waiting: number;
  builds: {
    label: string;
    rounds: { routingPerSec: number; plainPerSec: number; ratio: number }[];
    ratio: number;
    lowest: number;
    highest: number;
  }[];
}

/** `--routing-drain` (see the top): a worker of each build drains each side's stored backlog, alternated. */
export async function measureRoutingDrain(
  options: BenchOptions,
  databaseUrl: string,
  database: Database,
  builds: Build[],
): Promise<RoutingDrainFigures> {
  const db = database.db;
  const log = createLogger('warn');
  const boss = await startBoss(databaseUrl, log, { max: 2, supervise: false, schedule: false });
  try {
    await createQueues(boss);
    const routing = await seedSide(db, 'routing', true);
    const plain = await seedSide(db, 'no routing', false);
    await assignByHandOnInsert(db, plain);
    const every = Math.max(1, Math.round(100 / options.routingNewPercent));
    const count = options.routingEvents;
    const drain = async (side: Side, build: Build) => {
      await sql`UPDATE threads SET status = 'resolved' WHERE workspace_id = ${side.workspaceId} AND status <> 'resolved'`.execute(db);
      await sql`ANALYZE threads`.execute(db);
      side.run += 1;
      side.contacts = 0;
      const ids = await storeDeliveries(database, boss, side, every, count);
      await sql`CHECKPOINT`.execute(db);
      const worker = await serve(options, 'worker', databaseUrl, { root: build.root, waitForStart: false });
      try {
        await waitForDrain(worker, db);
      } finally {
        await worker.stop();
      }
      // From the first batch's start to the last's, by the rows' own clock, as the compare's drain.
      const { rows } = await sql<{ processed: number; seconds: number }>`
        SELECT count(*) FILTER (WHERE status = 'processed')::int AS processed,
          extract(epoch FROM max(processed_at) - min(processed_at))::float8 AS seconds
        FROM webhook_inbox WHERE id = ANY(${ids}::uuid[])`.execute(db);
      if (rows[0]!.processed !== count) throw new Error(`${side.label}: ${rows[0]!.processed} of ${count} deliveries processed`);
      return count / Math.max(rows[0]!.seconds, 0.001);
    };
    // A warm-up of each, untimed: tables and indexes in memory.
    await drain(routing, builds[0]!);
    await drain(plain, builds[0]!);
    const figures = builds.map((b) => ({ label: b.label, rounds: [] as RoutingDrainFigures['builds'][number]['rounds'] }));
    for (let r = 0; r < options.rounds; r++) {
      const order = r % 2 === 0 ? builds.map((_, i) => i) : builds.map((_, i) => builds.length - 1 - i);
      for (const i of order) {
        const first = (r + i) % 2 === 0 ? routing : plain;
        const a = await drain(first, builds[i]!);
        const b = await drain(first === routing ? plain : routing, builds[i]!);
        const [routingPerSec, plainPerSec] = first === routing ? [a, b] : [b, a];
        figures[i]!.rounds.push({
          routingPerSec: Math.round(routingPerSec),
          plainPerSec: Math.round(plainPerSec),
          ratio: routingPerSec / plainPerSec,
        });
        say(
          `routing drain round ${r + 1}, ${builds[i]!.label}: routing ${Math.round(routingPerSec)}/s, no routing ${Math.round(plainPerSec)}/s`,
        );
      }
    }
    const { rows } = await sql<{ assigned: number; waiting: number }>`
      SELECT count(*) FILTER (WHERE assignee_id IS NOT NULL)::int AS assigned, count(*) FILTER (WHERE assignee_id IS NULL)::int AS waiting
      FROM threads WHERE workspace_id = ${routing.workspaceId} AND status = 'open'`.execute(db);
    return {
      deliveries: count,
      newPercent: 100 / every,
      assigned: rows[0]!.assigned,
      waiting: rows[0]!.waiting,
      builds: figures.map((f) => {
        const ratios = f.rounds.map((x) => x.ratio);
        return { ...f, ratio: median(ratios), lowest: Math.min(...ratios), highest: Math.max(...ratios) };
      }),
    };
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}
