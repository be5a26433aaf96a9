// `--routing`: what routing costs processing. Two workspaces alike in everything (50 agents in
// 5 teams of 10, five connections, one per team, new threads starting in the connection's
// team) but `autoAssign` on the teams of one; the same kind of batches (new contacts opening
// threads and known contacts writing again) are applied to each through the workers' own
// entry, applyDeliveries, one transaction per batch, in this one process. Runs alternate
// (routing first in odd rounds, last in even ones) so the machine's drift falls on both; each
// round's ratio is routing's throughput over no routing's, reported as the median with the
// lowest and highest. Only the apply step is timed, not fetching or parsing the inbox rows,
// so routing's share of a whole worker's drain is smaller than the figure shown.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createConnection } from '../../src/connections/connections.service.js';
import type { Db } from '../../src/db/database.js';
import { startBoss } from '../../src/jobs/boss.js';
import { createLogger } from '../../src/logger.js';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import type { DeliveryEvents } from '../../src/messaging/apply-plan.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { median, say } from './common.js';
import type { BenchOptions } from './options.js';

const AGENTS = 50;
const TEAMS = 5;
/** Events per batch: the webhook worker's batch size. */
const BATCH = 20;

interface Side {
  label: 'routing' | 'no routing';
  workspaceId: number;
  accounts: string[];
  /** Contacts that wrote so far, who write again in later batches. */
  contacts: number;
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
  return { label, workspaceId: workspace.id, accounts, contacts: 0 };
}

let sequence = 0;

/** One batch: half new contacts (each opens a thread), half contacts who wrote before. */
function batchOf(side: Side): DeliveryEvents {
  const events = [];
  for (let i = 0; i < BATCH; i++) {
    sequence++;
    const again = i % 2 === 1 && side.contacts > 0;
    const contact = again ? (sequence * 7919) % side.contacts : side.contacts++;
    events.push({
      type: 'message' as const,
      externalAccountId: side.accounts[contact % TEAMS]!,
      externalMessageId: `bench-routing-${side.workspaceId}-${sequence}`,
      contact: { externalId: `+1555${String(contact).padStart(7, '0')}`, name: `Customer ${contact}` },
      text: `Message ${sequence}: where is my order?`,
    });
  }
  return { deliveryId: `bench-routing-${sequence}`, integrationKey: 'sms', events };
}

export interface RoutingFigures {
  agents: number;
  teams: number;
  batches: number;
  eventsPerRun: number;
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
  // No system mailer: notification e-mail queues nothing (docs/teams.md).
  const deps = { boss, config: loadConfig({}), log };
  try {
    const routing = await seedSide(db, 'routing', true);
    const plain = await seedSide(db, 'no routing', false);
    const batches = Math.max(10, Math.round(options.routingEvents / BATCH));
    const run = async (side: Side) => {
      const work = Array.from({ length: batches }, () => batchOf(side));
      const started = performance.now();
      for (const d of work) await db.transaction().execute((trx) => applyDeliveries(deps, trx, [d], new Date()));
      return (batches * BATCH) / ((performance.now() - started) / 1000);
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
      FROM threads WHERE workspace_id = ${routing.workspaceId}`.execute(db);
    return {
      agents: AGENTS,
      teams: TEAMS,
      batches,
      eventsPerRun: batches * BATCH,
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
