// `--statements [--compare <git-ref>]`: what processing one delivery costs PostgreSQL, statement
// by statement. A `--role api` stores --deliveries signed deliveries (unique contacts and
// messages as the ingest burst sends them), then a `--role worker` drains them with
// pg_stat_statements recording every statement it runs, those inside triggers too; the table
// and index statistics say how many rows and index entries the drain wrote. Per delivery:
// statements, calls, execution time, rows and index entries written, WAL bytes; and the
// statements the api ran to store them, per delivery.
// BENCH_SETUP_SQL (see compare.ts) runs on this build's database before the drain.
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { provisionTenant } from '../../harness/service.js';
import { createDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { anyDeliveryPending } from './bench.queries.js';
import { burst, POSTGRES_FLAGS, serve, signedDeliveries, waitFor } from './common.js';
import type { BenchOptions } from './options.js';

export interface StatementCost {
  query: string;
  callsPerBatch: number;
  /** Execution time per delivery, µs (the statement's own, not its round trip). */
  usPerDelivery: number;
  /** Planning time per delivery, µs: on a partitioned table it grows with the partitions it may touch. */
  planUsPerDelivery: number;
  rowsPerDelivery: number;
}

export interface TableWrites {
  table: string;
  insertsPerDelivery: number;
  updatesPerDelivery: number;
  /** Updates that were not HOT: each writes a new entry in every index of the table. */
  nonHotPerDelivery: number;
  indexes: number;
}

export interface DrainCost {
  deliveries: number;
  batches: number;
  /** Statements the service sent per batch (its round trips; pg-boss's included). */
  statementsPerBatch: number;
  /** Statements run inside those per delivery: foreign-key checks, triggers' statements. */
  nestedPerDelivery: number;
  statementUsPerDelivery: number;
  /** Planning time of those statements per delivery, µs (not in statementUsPerDelivery). */
  planUsPerDelivery: number;
  walBytesPerDelivery: number;
  /** Index entries written per delivery: btree entries from inserts and non-HOT updates, and GIN keys. */
  indexEntriesPerDelivery: number;
  tables: TableWrites[];
  statements: StatementCost[];
  /** The api storing the deliveries, per delivery acknowledged: its statements, their time and WAL. */
  ingest: { statementUsPerDelivery: number; planUsPerDelivery: number; walBytesPerDelivery: number; statements: StatementCost[] };
}

const round = (n: number, digits = 1) => Number(n.toFixed(digits));

/** The drain of `count` deliveries by the build at `root`, on a fresh database of `cluster`. */
export async function measureDrainCost(
  options: BenchOptions,
  root: string,
  admin: pg.Client,
  url: string,
  name: string,
  count: number,
  setupSql?: string,
) {
  await admin.query(`CREATE DATABASE ${name}`);
  const u = new URL(url);
  u.pathname = `/${name}`;
  const databaseUrl = u.toString();
  const database = createDatabase(databaseUrl, { max: 2 });
  const db = database.db;
  try {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      const api = await serve(options, 'api', databaseUrl, { root });
      let ingestWal: number;
      try {
        await provisionTenant(api.url, 'Bench');
        await client.query('SELECT pg_stat_statements_reset()');
        const walAtIngest = (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn')).rows[0]!.lsn;
        await burst(api.url, signedDeliveries(count), { connections: 50, amount: count });
        ingestWal = await walSince(client, walAtIngest);
      } finally {
        await api.stop();
      }
      const ingestStatements = await readStatements(client);
      if (setupSql) await client.query(setupSql);
      const tablesBefore = await tableStats(client);
      await client.query('SELECT pg_stat_statements_reset()');
      const walBefore = (await client.query<{ lsn: string }>('SELECT pg_current_wal_lsn() AS lsn')).rows[0]!.lsn;
      const worker = await serve(options, 'worker', databaseUrl, { root, waitForStart: false });
      try {
        // Every 100 ms: the search indexer starts 250 ms after the last batch, and its work is not the drain's.
        await waitFor('the worker to drain the inbox', async () => !(await anyDeliveryPending(db)), 300_000, 100);
      } finally {
        await worker.stop();
      }
      const wal = await walSince(client, walBefore);
      const tablesAfter = await tableStats(client);
      const statements = await readStatements(client);
      // Each batch locks its rows once (lockPendingRows); pg-boss's fetch skips locked rows too.
      const batches = statements
        .filter((s) => /from "webhook_inbox".*for update skip locked/is.test(s.query))
        .reduce((n, s) => n + Number(s.calls), 0);
      const { rows: gin } = await client
        .query<{ keys: number }>(`SELECT coalesce(avg(length(search_vector)), 0)::float8 AS keys FROM messages`)
        .catch(() => ({ rows: [{ keys: 0 }] }));
      const tables: TableWrites[] = [];
      let entries = 0;
      for (const [table, after] of tablesAfter) {
        const before = tablesBefore.get(table) ?? { ins: 0, upd: 0, hot: 0, indexes: after.indexes, gin: after.gin };
        const ins = after.ins - before.ins;
        const upd = after.upd - before.upd;
        const nonHot = upd - (after.hot - before.hot);
        if (ins === 0 && upd === 0) continue;
        tables.push({
          table,
          insertsPerDelivery: round(ins / count, 2),
          updatesPerDelivery: round(upd / count, 2),
          nonHotPerDelivery: round(nonHot / count, 2),
          indexes: after.indexes,
        });
        entries += (ins + nonHot) * (after.indexes - after.gin);
        if (table === 'messages' && after.gin > 0) entries += ins * gin[0]!.keys;
        else entries += (ins + nonHot) * after.gin;
      }
      // A nested statement (a foreign key's check, a trigger's) is also in its caller's time.
      const toplevel = statements.filter((s) => s.toplevel);
      const calls = toplevel.reduce((n, s) => n + Number(s.calls), 0);
      const nested = statements.filter((s) => !s.toplevel).reduce((n, s) => n + Number(s.calls), 0);
      const ingestTop = ingestStatements.filter((st) => st.toplevel);
      const result: DrainCost = {
        ingest: {
          statementUsPerDelivery: round((ingestTop.reduce((n, st) => n + st.total_exec_time, 0) * 1000) / count),
          planUsPerDelivery: round((ingestTop.reduce((n, st) => n + st.total_plan_time, 0) * 1000) / count),
          walBytesPerDelivery: Math.round(ingestWal / count),
          statements: ingestStatements.slice(0, 10).map((st) => ({
            query: `${st.toplevel ? '' : '(nested) '}${st.query.replace(/\s+/g, ' ')}`.slice(0, 110),
            callsPerBatch: round(Number(st.calls) / count, 3),
            usPerDelivery: round((st.total_exec_time * 1000) / count),
            planUsPerDelivery: round((st.total_plan_time * 1000) / count),
            rowsPerDelivery: round(Number(st.rows) / count, 2),
          })),
        },
        deliveries: count,
        batches,
        statementsPerBatch: round(calls / Math.max(batches, 1)),
        nestedPerDelivery: round(nested / count, 2),
        statementUsPerDelivery: round((toplevel.reduce((n, s) => n + s.total_exec_time, 0) * 1000) / count),
        planUsPerDelivery: round((toplevel.reduce((n, s) => n + s.total_plan_time, 0) * 1000) / count),
        walBytesPerDelivery: Math.round(wal / count),
        indexEntriesPerDelivery: round(entries / count),
        tables: tables.sort((a, b) => a.table.localeCompare(b.table)),
        statements: statements.slice(0, 25).map((s) => ({
          query: `${s.toplevel ? '' : '(nested) '}${s.query.replace(/\s+/g, ' ')}`.slice(0, 110),
          callsPerBatch: round(Number(s.calls) / Math.max(batches, 1), 2),
          usPerDelivery: round((s.total_exec_time * 1000) / count),
          planUsPerDelivery: round((s.total_plan_time * 1000) / count),
          rowsPerDelivery: round(Number(s.rows) / count, 2),
        })),
      };
      return result;
    } finally {
      await client.end();
    }
  } finally {
    await database.close();
  }
}

async function walSince(client: pg.Client, lsn: string): Promise<number> {
  const { rows } = await client.query<{ bytes: string }>('SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), $1) AS bytes', [lsn]);
  return Number(rows[0]!.bytes);
}

/** This database's statements since the last reset, by time, once the backends' counts have settled. */
async function readStatements(client: pg.Client) {
  // The statistics collector publishes a backend's counts when it goes idle: wait for them to settle.
  await client.query('SELECT pg_stat_force_next_flush()').catch(() => {});
  await new Promise((r) => setTimeout(r, 1500));
  const { rows } = await client.query<{
    query: string;
    calls: string;
    total_exec_time: number;
    total_plan_time: number;
    rows: string;
    toplevel: boolean;
  }>(`
    SELECT s.query, s.calls, s.total_exec_time, s.total_plan_time, s.rows, s.toplevel
    FROM pg_stat_statements s JOIN pg_roles r ON r.oid = s.userid
    WHERE s.dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
    ORDER BY s.total_exec_time DESC`);
  return rows;
}

/** Rows inserted, updated and HOT-updated per user table, with its number of indexes (and GIN ones). */
async function tableStats(client: pg.Client) {
  const { rows } = await client.query<{ relname: string; ins: string; upd: string; hot: string; indexes: number; gin: number }>(`
    SELECT t.relname, t.n_tup_ins AS ins, t.n_tup_upd AS upd, t.n_tup_hot_upd AS hot,
      (SELECT count(*) FROM pg_index i WHERE i.indrelid = t.relid)::int AS indexes,
      (SELECT count(*) FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
        WHERE i.indrelid = t.relid AND a.amname = 'gin')::int AS gin
    FROM pg_stat_user_tables t`);
  return new Map(
    rows.map((r) => [`${r.relname}`, { ins: Number(r.ins), upd: Number(r.upd), hot: Number(r.hot), indexes: r.indexes, gin: r.gin }]),
  );
}

/** A PostgreSQL with pg_stat_statements loaded, counting statements inside functions and triggers too. */
export async function startProfiledPostgres() {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-bench-statements-'));
  const postgres = await startEmbeddedPostgres(dir, {
    flags: [
      '-c',
      'shared_preload_libraries=pg_stat_statements',
      '-c',
      'pg_stat_statements.track=all',
      '-c',
      'pg_stat_statements.track_planning=on',
      ...POSTGRES_FLAGS,
    ],
  });
  const u = new URL(postgres.url);
  u.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: u.toString() });
  await admin.connect();
  return {
    url: postgres.url,
    admin,
    async stop() {
      await admin.end().catch(() => {});
      await postgres.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export function drainCostLines(label: string, c: DrainCost): string[] {
  const lines = [
    `${label}: ${c.deliveries} deliveries in ${c.batches} batches; per delivery: ${c.statementUsPerDelivery} µs of statement execution (+ ${c.planUsPerDelivery} µs planning), ${c.indexEntriesPerDelivery} index entries, ${c.walBytesPerDelivery} WAL bytes; ${c.statementsPerBatch} statements per batch, ${c.nestedPerDelivery} nested ones per delivery`,
    '  table writes per delivery (inserts, updates, non-HOT updates; indexes):',
    ...c.tables.map(
      (t) =>
        `    ${t.table.padEnd(24)} ${t.insertsPerDelivery} ins, ${t.updatesPerDelivery} upd, ${t.nonHotPerDelivery} non-HOT; ${t.indexes} indexes`,
    ),
    '  statements by execution time (calls per batch, µs per delivery, planning µs per delivery, rows per delivery):',
    ...c.statements.map(
      (s) =>
        `    ${String(s.callsPerBatch).padStart(6)} ${String(s.usPerDelivery).padStart(7)} µs ${String(s.planUsPerDelivery).padStart(6)} µs ${String(s.rowsPerDelivery).padStart(6)}  ${s.query}`,
    ),
    `  storing them (the api): ${c.ingest.statementUsPerDelivery} µs of statement execution (+ ${c.ingest.planUsPerDelivery} µs planning), ${c.ingest.walBytesPerDelivery} WAL bytes per delivery; by time (calls, µs, planning µs, rows per delivery):`,
    ...c.ingest.statements.map(
      (s) =>
        `    ${String(s.callsPerBatch).padStart(6)} ${String(s.usPerDelivery).padStart(7)} µs ${String(s.planUsPerDelivery).padStart(6)} µs ${String(s.rowsPerDelivery).padStart(6)}  ${s.query}`,
    ),
  ];
  return lines;
}
