// What the inbound batch's two big statements cost PostgreSQL, apart from everything else: the
// thread upsert and the messages insert, as the worker sends them (src/messaging/messaging.queries.ts),
// on this checkout's schema, measured as the CPU of the one backend that runs them.
//
//   node --import tsx scripts/bench/batch-sql.ts [--batches 120] [--size 150] [--contacts 2000]
//       [--variant 'name=SQL'] ...
//
// Each variant (and `as migrated`) gets a fresh database migrated to the latest schema, with
// the variant's SQL run after the migrations: one workspace and connection, `--contacts`
// contacts, then `--batches` transactions of `--size` messages from random contacts (a
// thread upsert, then the insert), like the bench's deliveries (about 1 KB of text each). It
// prints the backend CPU per message of each statement, the median of three passes.
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { sql } from 'kysely';
import { newConnectionKey } from '../../src/connections/webhook-secrets.js';
import { createDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { insertInboundMessages, upsertThreads } from '../../src/messaging/messaging.queries.js';

const { values } = parseArgs({
  options: {
    batches: { type: 'string', default: '120' },
    size: { type: 'string', default: '150' },
    contacts: { type: 'string', default: '2000' },
    variant: { type: 'string', multiple: true, default: [] },
  },
});
const BATCHES = Number(values.batches);
const SIZE = Number(values.size);
const CONTACTS = Number(values.contacts);
const FILLER = 'Hello, I would like to know where my order is. '.repeat(22);

const TICK_MS = 10;
function backendCpuMs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const f = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return (Number(f[11]) + Number(f[12])) * TICK_MS;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function measure(url: string, setup: string | undefined): Promise<{ upsert: number; insert: number }> {
  const database = createDatabase(url, { max: 1 });
  const db = database.db;
  try {
    await migrateToLatest(db);
    if (setup) await sql.raw(setup).execute(db);
    const { rows: ws } = await sql<{
      id: number;
    }>`INSERT INTO workspaces (name, app_id) VALUES ('Bench', 'app_bench') RETURNING id`.execute(db);
    const workspaceId = ws[0]!.id;
    const { rows: cs } = await sql<{ id: number }>`
      INSERT INTO connections (workspace_id, integration_key, external_account_id, name, managed_by, connection_key)
      VALUES (${workspaceId}, 'whatsapp', 'bench', 'Bench', 'operator', ${newConnectionKey()}) RETURNING id`.execute(db);
    const connectionId = Number(cs[0]!.id);
    const { rows: contacts } = await sql<{ id: string }>`
      INSERT INTO contacts (workspace_id, name, created_at, updated_at)
      SELECT ${workspaceId}, 'Customer ' || g, now(), now() FROM generate_series(1, ${CONTACTS}) g RETURNING id`.execute(db);
    const contactIds = contacts.map((c) => Number(c.id));
    const { rows: pid } = await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(db);
    let upsertMs = 0;
    let insertMs = 0;
    let sequence = 0;
    for (let b = 0; b < BATCHES; b++) {
      const now = new Date();
      const picked = Array.from({ length: SIZE }, () => contactIds[Math.floor(Math.random() * contactIds.length)]!);
      await db.transaction().execute(async (trx) => {
        const t0 = backendCpuMs(pid[0]!.pid);
        const threads = await upsertThreads(
          trx,
          picked.map((contactId) => ({
            workspaceId,
            connectionId,
            contactId,
            lastMessageAt: now,
            preview: FILLER.slice(0, 140),
            unread: 1,
            lastInboundAt: now,
            teamId: null,
          })),
          now,
        );
        const t1 = backendCpuMs(pid[0]!.pid);
        await insertInboundMessages(
          trx,
          picked.map((contactId) => ({
            workspaceId,
            threadId: threads.get(`${connectionId}|${contactId}`)!.id,
            connectionId,
            externalId: `wamid.${++sequence}`,
            text: `${sequence}: ${FILLER}`,
            createdAt: now,
          })),
          now,
        );
        const t2 = backendCpuMs(pid[0]!.pid);
        // The first batches create the threads; the rest update them, as a drain mostly does.
        if (b >= BATCHES / 4) {
          upsertMs += t1 - t0;
          insertMs += t2 - t1;
        }
      });
    }
    const measured = SIZE * (BATCHES - Math.ceil(BATCHES / 4));
    return { upsert: (upsertMs * 1000) / measured, insert: (insertMs * 1000) / measured };
  } finally {
    await database.close();
  }
}

async function main(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-batch-sql-'));
  const postgres = await startEmbeddedPostgres(dir);
  const adminUrl = new URL(postgres.url);
  adminUrl.pathname = '/postgres';
  const admin = createDatabase(adminUrl.toString(), { max: 1 });
  const variants: [string, string | undefined][] = [
    ['as migrated', undefined],
    ...values.variant.map((v): [string, string] => [v.slice(0, v.indexOf('=')), v.slice(v.indexOf('=') + 1)]),
  ];
  const results = new Map<string, { upsert: number[]; insert: number[] }>(variants.map(([n]) => [n, { upsert: [], insert: [] }]));
  try {
    let n = 0;
    for (let pass = 0; pass < 3; pass++) {
      for (const [name, setup] of variants) {
        const db = `batch_sql_${n++}`;
        await sql.raw(`CREATE DATABASE ${db}`).execute(admin.db);
        const u = new URL(postgres.url);
        u.pathname = `/${db}`;
        const r = await measure(u.toString(), setup);
        results.get(name)!.upsert.push(r.upsert);
        results.get(name)!.insert.push(r.insert);
        console.error(`pass ${pass + 1}, ${name}: upsert ${r.upsert.toFixed(1)} µs, insert ${r.insert.toFixed(1)} µs per message`);
        await sql.raw(`DROP DATABASE ${db}`).execute(admin.db);
      }
    }
    console.log('backend CPU per message (µs), median of 3 [min–max]');
    for (const [name, r] of results) {
      const span = (xs: number[]) => `${median(xs).toFixed(1)} [${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}]`;
      console.log(`${name.padEnd(40)} thread upsert ${span(r.upsert)}   messages insert ${span(r.insert)}`);
    }
  } finally {
    await admin.close();
    await postgres.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

await main();
