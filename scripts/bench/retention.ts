// `npm run bench -- --retention [--rows 10000000] [--body-bytes 1024]`: what inbox retention
// costs PostgreSQL for one day of processed deliveries, deleted row by row (as before the inbox
// was partitioned, and still for the DEFAULT partition) against dropped as a partition.
//
// One embedded PostgreSQL (default durability), migrated. `--rows` processed deliveries spread
// evenly over 30 days that ended 15 days ago are seeded with generate_series twice, with the
// same ids: into a plain table shaped like the inbox (its columns and indexes), and into
// webhook_inbox, whose day partitions are made for those days first. After a CHECKPOINT each
// way removes the oldest day: the batches of the maintenance job (1,000 rows a DELETE) then the
// VACUUM those deletes leave to autovacuum, against dropping the day's partition. It prints the
// wall time and the WAL bytes (pg_current_wal_lsn before and after) of each.
//
// Then the same for the outbound tables, on a database of their own: `--rows` events over the
// same 30 days, each with one succeeded delivery and one attempt, every day partitioned but the
// oldest, whose rows lie in the DEFAULT partitions. That day is deleted as the maintenance job
// deletes the DEFAULT's (1,000 events a statement, their deliveries and attempts with them),
// and the next day's attempts, deliveries and events are dropped as partitions.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { createDatabase, type Db } from '../../src/db/database.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { dropExpiredPartitions, preparePartitions } from '../../src/db/partitions.js';
import { OUTBOUND_DROP_ORDER, RETENTION_LIMITS } from '../../src/maintenance/inbox-retention.js';
import {
  deleteInboxBatch,
  deleteOutboundEventsBatch,
  inboxRowsToKeep,
  outboundRowsToKeep,
} from '../../src/maintenance/maintenance.queries.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { say } from './common.js';
import { withDatabase } from './compare.js';

const DAY = 24 * 3600 * 1000;
const DAYS = 30;
/** Rows per seeding statement: one transaction never holds all of them. */
const SEED_CHUNK = 500_000;

/** A day's rows deleted (then vacuumed) against its partitions dropped: time and WAL of each. */
interface DeleteAgainstDrop {
  deleteMs: number;
  deleteWalBytes: number;
  vacuumMs: number;
  vacuumWalBytes: number;
  dropMs: number;
  dropWalBytes: number;
}

export interface RetentionCost extends DeleteAgainstDrop {
  rows: number;
  bodyBytes: number;
  dayRows: number;
  outbound: OutboundRetentionCost;
}

export interface OutboundRetentionCost extends DeleteAgainstDrop {
  dayEvents: number;
}

async function walLsn(db: Db): Promise<string> {
  const { rows } = await sql<{ lsn: string }>`SELECT pg_current_wal_lsn()::text AS lsn`.execute(db);
  return rows[0]!.lsn;
}

async function walSince(db: Db, lsn: string): Promise<number> {
  const { rows } = await sql<{ n: string }>`SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), ${lsn}::pg_lsn)::text AS n`.execute(db);
  return Number(rows[0]!.n);
}

async function timed<T>(db: Db, fn: () => Promise<T>): Promise<{ ms: number; wal: number; value: T }> {
  await sql`CHECKPOINT`.execute(db);
  const lsn = await walLsn(db);
  const t0 = performance.now();
  const value = await fn();
  const ms = performance.now() - t0;
  return { ms, wal: await walSince(db, lsn), value };
}

async function seed(db: Db, table: string, rows: number, bodyBytes: number, start: number): Promise<void> {
  const body = `{"entry":"${'x'.repeat(Math.max(0, bodyBytes - 12))}"}`;
  // The same g gives the same moment in both tables; its id is a UUIDv7 of that moment.
  for (let from = 1; from <= rows; from += SEED_CHUNK) {
    const to = Math.min(rows, from + SEED_CHUNK - 1);
    await sql`
      INSERT INTO ${sql.table(table)} (id, integration_key, raw_body, status, processed_at, created_at, updated_at)
      SELECT uuidv7(at - now()), 'whatsapp', ${body}, 'processed', at, at, at
      FROM (SELECT ${new Date(start)}::timestamptz + (g - 1) * ${`${(DAYS * DAY) / rows} milliseconds`}::interval AS at
            FROM generate_series(${from}::bigint, ${to}::bigint) g) s`.execute(db);
    say(`  ${table}: ${to.toLocaleString('en')} of ${rows.toLocaleString('en')} rows`);
  }
}

/** `rows` events over DAYS days from `start`, each with a succeeded delivery and an attempt. */
async function seedOutbound(db: Db, rows: number, bodyBytes: number, start: number): Promise<void> {
  const workspace = await createWorkspace(db, 'Bench');
  const { rows: endpoint } = await sql<{ id: number }>`
    INSERT INTO webhook_endpoints (workspace_id, url, events, secret_sealed, created_at, updated_at)
    VALUES (${workspace.id}, 'https://hooks.example.com/', '{*}', '\\x00', now(), now()) RETURNING id`.execute(db);
  const body = `{"data":"${'x'.repeat(Math.max(0, bodyBytes - 11))}"}`;
  for (let from = 1; from <= rows; from += SEED_CHUNK) {
    const to = Math.min(rows, from + SEED_CHUNK - 1);
    await sql`
      WITH events AS (
        INSERT INTO webhook_events (id, workspace_id, type, body, created_at)
        SELECT uuidv7(at - now()), ${workspace.id}, 'message.created', ${body}, at
        FROM (SELECT ${new Date(start)}::timestamptz + (g - 1) * ${`${(DAYS * DAY) / rows} milliseconds`}::interval AS at
              FROM generate_series(${from}::bigint, ${to}::bigint) g) s
        RETURNING id, created_at),
      deliveries AS (
        INSERT INTO webhook_deliveries (endpoint_id, event_id, status, attempt_count, created_at, updated_at)
        SELECT ${endpoint[0]!.id}, id, 'succeeded', 1, created_at, created_at FROM events
        RETURNING id, event_id, created_at)
      INSERT INTO webhook_attempts (delivery_id, event_id, attempted_at, status_code, duration_ms)
      SELECT id, event_id, created_at, 204, 5 FROM deliveries`.execute(db);
    say(`  outbound: ${to.toLocaleString('en')} of ${rows.toLocaleString('en')} events`);
  }
}

async function measureOutboundRetention(url: string, options: { rows: number; bodyBytes: number }): Promise<OutboundRetentionCost> {
  const admin = createDatabase(url, { max: 1 });
  await sql`CREATE DATABASE outbound_retention`.execute(admin.db);
  await admin.close();
  const database = createDatabase(withDatabase(url, 'outbound_retention'), { max: 2, statementTimeoutMillis: 0 });
  const db = database.db;
  try {
    await migrateToLatest(db);
    const start = Math.floor(Date.now() / DAY) * DAY - (DAYS + 15) * DAY;
    for (const table of OUTBOUND_DROP_ORDER) {
      await sql`DROP TABLE ${sql.table(`${table}_legacy`)}`.execute(db);
      // The oldest day has no partition: its rows land in the DEFAULT, deleted row by row.
      for (let d = 1; d < DAYS; d++) await preparePartitions(db, table, new Date(start + d * DAY), { daysAhead: 0 });
    }
    say(`seeding ${options.rows.toLocaleString('en')} outbound events over ${DAYS} days, each with a delivery and an attempt`);
    await seedOutbound(db, options.rows, options.bodyBytes, start);
    for (const table of OUTBOUND_DROP_ORDER) await sql`VACUUM (ANALYZE) ${sql.table(table)}`.execute(db);

    say('deleting the oldest outbound day row by row (the maintenance batches)');
    const deleted = await timed(db, async () => {
      let n = 0;
      for (;;) {
        const k = await deleteOutboundEventsBatch(db, 'webhook_events_default', new Date(start + DAY), RETENTION_LIMITS.batchSize);
        n += k;
        if (k < RETENTION_LIMITS.batchSize) return n;
      }
    });
    say('vacuuming what the deletes left');
    const vacuumed = await timed(db, async () => {
      for (const table of OUTBOUND_DROP_ORDER) await sql`VACUUM ${sql.table(`${table}_default`)}`.execute(db);
    });
    say("dropping the next day's outbound partitions");
    const cutoff = new Date(start + 2 * DAY);
    const dropped = await timed(db, async () => {
      let n = 0;
      for (const table of OUTBOUND_DROP_ORDER)
        n += (await dropExpiredPartitions(db, table, cutoff, outboundRowsToKeep(table))).dropped.length;
      return n;
    });
    if (dropped.value !== 3) throw new Error(`expected three partitions dropped, got ${dropped.value}`);
    return {
      dayEvents: deleted.value,
      deleteMs: deleted.ms,
      deleteWalBytes: deleted.wal,
      vacuumMs: vacuumed.ms,
      vacuumWalBytes: vacuumed.wal,
      dropMs: dropped.ms,
      dropWalBytes: dropped.wal,
    };
  } finally {
    await database.close();
  }
}

export async function measureRetention(options: { rows: number; bodyBytes: number }): Promise<RetentionCost> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-bench-retention-'));
  const pg = await startEmbeddedPostgres(dir);
  const database = createDatabase(pg.url, { max: 2, statementTimeoutMillis: 0 });
  const db = database.db;
  try {
    await migrateToLatest(db);
    const start = Math.floor(Date.now() / DAY) * DAY - (DAYS + 15) * DAY;
    // The steady state: every seeded day has its partition, made while it was ahead. The
    // migration's legacy range (empty here) would cover them all, so it goes first.
    await sql`DROP TABLE webhook_inbox_legacy`.execute(db);
    for (let d = 0; d < DAYS; d++) await preparePartitions(db, 'webhook_inbox', new Date(start + d * DAY), { daysAhead: 0 });
    await sql`CREATE TABLE inbox_rows (LIKE webhook_inbox INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING INDEXES)`.execute(db);
    say(`seeding ${options.rows.toLocaleString('en')} processed deliveries of ${options.bodyBytes} bytes over ${DAYS} days, twice`);
    await seed(db, 'inbox_rows', options.rows, options.bodyBytes, start);
    await seed(db, 'webhook_inbox', options.rows, options.bodyBytes, start);
    await sql`VACUUM (ANALYZE) inbox_rows`.execute(db);
    await sql`VACUUM (ANALYZE) webhook_inbox`.execute(db);

    const cutoff = new Date(start + DAY);
    say('deleting the oldest day row by row (the maintenance batches)');
    const deleted = await timed(db, async () => {
      let n = 0;
      for (;;) {
        const k = await deleteInboxBatch(db, 'inbox_rows', 'processed', cutoff, RETENTION_LIMITS.batchSize);
        n += k;
        if (k < RETENTION_LIMITS.batchSize) return n;
      }
    });
    say('vacuuming what the deletes left');
    const vacuumed = await timed(db, () => sql`VACUUM inbox_rows`.execute(db));
    say('dropping the oldest day partition');
    const dropped = await timed(db, () =>
      dropExpiredPartitions(db, 'webhook_inbox', cutoff, inboxRowsToKeep(cutoff, new Date(cutoff.getTime() - 60 * DAY))),
    );
    if (dropped.value.dropped.length !== 1) throw new Error(`expected one partition dropped, got ${JSON.stringify(dropped.value)}`);
    const outbound = await measureOutboundRetention(pg.url, options);
    return {
      rows: options.rows,
      bodyBytes: options.bodyBytes,
      dayRows: deleted.value,
      deleteMs: deleted.ms,
      deleteWalBytes: deleted.wal,
      vacuumMs: vacuumed.ms,
      vacuumWalBytes: vacuumed.wal,
      dropMs: dropped.ms,
      dropWalBytes: dropped.wal,
      outbound,
    };
  } finally {
    await database.close();
    await pg.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

export function retentionLines(c: RetentionCost): string[] {
  const mb = (b: number) => `${(b / 1e6).toFixed(1)} MB`;
  const s = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
  return [
    `inbox retention of one day: ${c.dayRows.toLocaleString('en')} processed deliveries of ${c.rows.toLocaleString('en')} (${c.bodyBytes}-byte bodies, ${DAYS} days)`,
    `  ${`delete in batches of ${RETENTION_LIMITS.batchSize}`.padEnd(28)}${s(c.deleteMs).padStart(9)}   WAL ${mb(c.deleteWalBytes).padStart(10)}`,
    `  ${'+ the VACUUM it leaves'.padEnd(28)}${s(c.vacuumMs).padStart(9)}   WAL ${mb(c.vacuumWalBytes).padStart(10)}`,
    `  ${"drop the day's partition".padEnd(28)}${s(c.dropMs).padStart(9)}   WAL ${mb(c.dropWalBytes).padStart(10)}`,
    `outbound retention of one day: ${c.outbound.dayEvents.toLocaleString('en')} events of ${c.rows.toLocaleString('en')}, each with a delivery and an attempt`,
    `  ${`delete in batches of ${RETENTION_LIMITS.batchSize}`.padEnd(28)}${s(c.outbound.deleteMs).padStart(9)}   WAL ${mb(c.outbound.deleteWalBytes).padStart(10)}`,
    `  ${'+ the VACUUM it leaves'.padEnd(28)}${s(c.outbound.vacuumMs).padStart(9)}   WAL ${mb(c.outbound.vacuumWalBytes).padStart(10)}`,
    `  ${"drop the day's 3 partitions".padEnd(28)}${s(c.outbound.dropMs).padStart(9)}   WAL ${mb(c.outbound.dropWalBytes).padStart(10)}`,
  ];
}
