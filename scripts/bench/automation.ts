// `--automation`: what automation rules cost processing. Two workspaces alike in everything (one
// SMS connection) but 50 enabled rules in one: 45 on message.created (the text contains a
// keyword, and the thread is open: "refund", "invoice", … none of which the messages carry) and
// 5 on thread.created (a contact attribute), so every batch reads the rules and the threads'
// facts and evaluates them all, and none acts: what is compared is the engine's own cost on each
// delivery, not what a rule's actions would cost as the same change through the API. The same
// kind of batches (10 % of the messages from new contacts) are applied to each through the
// workers' own entry, applyDeliveries, one transaction per batch, in this one process. Runs
// alternate (rules first in odd rounds, last in even ones); each round's ratio is the rules'
// throughput over none's, reported as the median with the lowest and highest.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.js';
import { createConnection } from '../../src/connections/connections.service.js';
import type { Db } from '../../src/db/database.js';
import type { Deps } from '../../src/deps.js';
import { startBoss } from '../../src/jobs/boss.js';
import { createLogger } from '../../src/logger.js';
import { applyDeliveries } from '../../src/messaging/apply-events.js';
import type { DeliveryEvents } from '../../src/messaging/apply-plan.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { median, say } from './common.js';
import type { BenchOptions } from './options.js';

export const BENCH_RULES = 50;
const BATCH = 20;
const NEW_EVERY = 10;

interface Side {
  label: 'rules' | 'no rules';
  workspaceId: number;
  account: string;
  contacts: number;
  run: number;
}

async function seedSide(db: Db, label: Side['label']): Promise<Side> {
  const workspace = await createWorkspace(db, `Automation bench (${label})`);
  const account = `bench-a-${label === 'rules' ? 'r' : 'n'}-${randomBytes(3).toString('hex')}`;
  await createConnection(
    { db, config: loadConfig({}), secretKey: randomBytes(32) },
    workspace.id,
    { integrationKey: 'sms', externalAccountId: account, name: 'Line' },
    'operator',
  );
  if (label === 'rules') {
    const rules = Array.from({ length: BENCH_RULES }, (_, i) =>
      i < 45
        ? {
            event: 'message.created' as const,
            conditions: [
              { field: 'text', op: 'contains', value: `keyword-${i}` },
              { field: 'status', op: 'eq', value: 'open' },
            ],
            actions: [{ type: 'add_labels', labels: [`topic-${i}`] }],
          }
        : {
            event: 'thread.created' as const,
            conditions: [{ field: 'contact.attributes.tier', op: 'eq', value: `tier-${i}` }],
            actions: [{ type: 'set_priority', priority: 'urgent' }],
          },
    );
    await db
      .insertInto('automation_rules')
      .values(
        rules.map((r, i) => ({
          workspace_id: workspace.id,
          name: `Rule ${i + 1}`,
          position: i,
          event: r.event,
          conditions: JSON.stringify(r.conditions),
          actions: JSON.stringify(r.actions),
          idle_minutes: null,
          statuses: null,
        })),
      )
      .execute();
  }
  return { label, workspaceId: workspace.id, account, contacts: 0, run: 0 };
}

let sequence = 0;

function batchOf(side: Side): DeliveryEvents {
  const events = [];
  for (let i = 0; i < BATCH; i++) {
    sequence++;
    const again = sequence % NEW_EVERY !== 0 && side.contacts > 0;
    const contact = again ? (sequence * 7919) % side.contacts : side.contacts++;
    events.push({
      type: 'message' as const,
      externalAccountId: side.account,
      externalMessageId: `bench-automation-${side.workspaceId}-${sequence}`,
      contact: { externalId: `+2${String(side.run).padStart(3, '0')}${String(contact).padStart(7, '0')}`, name: `Customer ${contact}` },
      text: `Message ${sequence}: where is my order?`,
    });
  }
  return { deliveryId: `bench-automation-${sequence}`, integrationKey: 'sms', events };
}

export interface AutomationFigures {
  rules: number;
  batches: number;
  eventsPerRun: number;
  rounds: { rulesPerSec: number; plainPerSec: number; ratio: number }[];
  ratio: number;
  lowest: number;
  highest: number;
}

export async function measureAutomation(options: BenchOptions, databaseUrl: string, db: Db): Promise<AutomationFigures> {
  const log = createLogger('warn');
  const boss = await startBoss(databaseUrl, log, { max: 2, supervise: false, schedule: false });
  // Applying reads only the queue, the config, the log, the database and the clock of the deps.
  const deps = { boss, config: loadConfig({}), log, db, now: () => new Date() } as unknown as Deps;
  try {
    const withRules = await seedSide(db, 'rules');
    const plain = await seedSide(db, 'no rules');
    const batches = Math.max(10, Math.round(options.routingEvents / BATCH));
    const run = async (side: Side) => {
      side.run += 1;
      side.contacts = 0;
      const work = Array.from({ length: batches }, () => batchOf(side));
      let ms = 0;
      for (const d of work) {
        const started = performance.now();
        await db.transaction().execute((trx) => applyDeliveries(deps, trx, [d], new Date()));
        ms += performance.now() - started;
      }
      return (batches * BATCH) / (ms / 1000);
    };
    await sql`ANALYZE`.execute(db);
    // A warm-up of each, untimed: plans cached, tables and indexes in memory.
    await run(withRules);
    await run(plain);
    const rounds: AutomationFigures['rounds'] = [];
    for (let r = 0; r < options.rounds; r++) {
      const first = r % 2 === 0 ? withRules : plain;
      const a = await run(first);
      const b = await run(first === withRules ? plain : withRules);
      const [rulesPerSec, plainPerSec] = first === withRules ? [a, b] : [b, a];
      rounds.push({ rulesPerSec: Math.round(rulesPerSec), plainPerSec: Math.round(plainPerSec), ratio: rulesPerSec / plainPerSec });
      say(`automation round ${r + 1}: ${BENCH_RULES} rules ${Math.round(rulesPerSec)}/s, no rules ${Math.round(plainPerSec)}/s`);
    }
    const ratios = rounds.map((r) => r.ratio);
    return {
      rules: BENCH_RULES,
      batches,
      eventsPerRun: batches * BATCH,
      rounds,
      ratio: median(ratios),
      lowest: Math.min(...ratios),
      highest: Math.max(...ratios),
    };
  } finally {
    await boss.stop({ graceful: false, close: true });
  }
}
