import { type Kysely, type RawBuilder, sql } from 'kysely';
import { uuid7Floor } from '../crypto/uuid7.js';
import { lockKey, tryLockKeyForSession, unlockKeyForSession } from './advisory-locks.js';
import { arrayLiteral } from './array-literal.js';

/**
 * Tables partitioned by day on a UUIDv7 id (docs/operations.md, "Partitions"). A day's
 * partition `<table>_pYYYYMMDD` holds the ids made that UTC day; `<table>_default` catches any
 * id no day covers (a clock far off, a kept row of a dropped day), so an insert never fails;
 * `<table>_legacy` is the table as it was before partitioning, until retention drops it.
 */
export const PARTITIONED_TABLES = ['webhook_inbox', 'webhook_events', 'webhook_deliveries', 'webhook_attempts'] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

/**
 * Each table's partition key: its own id, or the id of the outbound event a row belongs to,
 * so that an event, its deliveries and their attempts lie in the same day and go together.
 */
export const PARTITION_KEYS: Record<PartitionedTable, string> = {
  webhook_inbox: 'id',
  webhook_events: 'id',
  webhook_deliveries: 'event_id',
  webhook_attempts: 'event_id',
};

/**
 * Unique indexes a table gains after its migration: `(id, event_id)`, the identity id with the
 * partition key, as a partitioned table's unique indexes must be. The pre-partitioning table
 * has none to adopt, and building one inside the migration would read the whole table under
 * its lock, so the parent's index is made ON ONLY and each partition's is built CONCURRENTLY
 * (a read that blocks no write) and attached. Days made after it get theirs when attached.
 */
const LATE_UNIQUE_INDEXES: Partial<Record<PartitionedTable, string>> = {
  webhook_deliveries: 'id, event_id',
  webhook_attempts: 'id, event_id',
};

/** Days of partitions made ahead of today, by every maintenance run and after migrating. */
export const PARTITION_DAYS_AHEAD = 7;

/**
 * How long DDL on a partitioned table waits for its lock. DETACH and DROP lock the parent
 * against every insert while they wait and while they run, so they give up quickly and the
 * next maintenance run tries again rather than stall ingestion behind a long transaction.
 */
const DDL_LOCK_TIMEOUT = '1s';

/** More rows to keep than this in an expired day: it is not dropped, retention deletes rows. */
const MAX_KEPT_ROWS = 10_000;

const DAY_MS = 24 * 3600 * 1000;

// biome-ignore lint/suspicious/noExplicitAny: runs right after migrating, before the schema's types apply
type AnyDb = Kysely<any>;

/**
 * One step of partition DDL, in its own transaction: it waits at most DDL_LOCK_TIMEOUT for
 * any lock, and holds the table's advisory lock, so two processes (a `serve` migrating while
 * the maintenance job runs) take turns instead of making the same partition twice.
 */
async function ddlStep<T>(db: AnyDb, table: PartitionedTable, fn: (trx: AnyDb) => Promise<T>): Promise<T> {
  return db.transaction().execute(async (trx) => {
    await sql`SET LOCAL lock_timeout = ${sql.lit(DDL_LOCK_TIMEOUT)}`.execute(trx);
    await lockKey(trx, `partitions:${table}`);
    return fn(trx);
  });
}

/** A lock not granted within DDL_LOCK_TIMEOUT: the step is left for the next run. */
const isLockTimeout = (err: unknown) => (err as { code?: string }).code === '55P03';

async function legacyIsDefault(db: AnyDb, table: PartitionedTable): Promise<boolean> {
  const { rows } = await sql<{ yes: boolean }>`
    SELECT partdefid = to_regclass(${`${table}_legacy`}) AS yes FROM pg_partitioned_table WHERE partrelid = ${table}::regclass`.execute(db);
  return rows[0]?.yes === true;
}

export interface Partition {
  name: string;
  /** Epoch ms of the range's ends; undefined for MINVALUE, or for the DEFAULT partition. */
  from?: number;
  to?: number;
  isDefault: boolean;
  /** The planner's row estimate (-1 when never analysed). */
  estimatedRows: number;
}

const dayStart = (ms: number) => Math.floor(ms / DAY_MS) * DAY_MS;
const dayName = (table: string, ms: number) => `${table}_p${new Date(ms).toISOString().slice(0, 10).replaceAll('-', '')}`;
const uuidMs = (bound: string) => Number.parseInt(bound.slice(0, 8) + bound.slice(9, 13), 16);

/** The partitions of `table`, with their ranges read back from the catalogue. */
export async function listPartitions(db: AnyDb, table: PartitionedTable): Promise<Partition[]> {
  const { rows } = await sql<{ name: string; bound: string; reltuples: number }>`
    SELECT c.relname AS name, pg_get_expr(c.relpartbound, c.oid) AS bound, c.reltuples
    FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
    WHERE i.inhparent = ${table}::regclass
    ORDER BY c.relname`.execute(db);
  return rows.map((r) => {
    const [, from, to] = /FROM \((?:'([0-9a-f-]{36})'|MINVALUE)\) TO \('([0-9a-f-]{36})'\)/.exec(r.bound) ?? [];
    return {
      name: r.name,
      from: from === undefined ? undefined : uuidMs(from),
      to: to === undefined ? undefined : uuidMs(to),
      isDefault: r.bound === 'DEFAULT',
      estimatedRows: Number(r.reltuples),
    };
  });
}

export interface Prepared {
  created: string[];
  /** The pre-partitioning table became the range below the first day (it was the DEFAULT). */
  convertedLegacy: boolean;
}

/**
 * Makes the day partitions from today to `daysAhead` days ahead, first turning the
 * pre-partitioning table (still the DEFAULT partition right after its migration) into a range
 * of its own when it holds at most `legacyMaxRows` rows by the planner's estimate: its
 * VALIDATE reads the whole table, which maintenance does while the service runs (the read
 * blocks no insert), and right after migrating only when that is quick.
 */
export async function preparePartitions(
  db: AnyDb,
  table: PartitionedTable,
  now: Date,
  options: { daysAhead?: number; legacyMaxRows?: number } = {},
): Promise<Prepared> {
  return withPrepareLock(db, table, (conn) => prepareLocked(conn, table, now, options));
}

/** How often a process waiting for another's preparation of a table asks for its turn again. */
const PREPARE_LOCK_POLL_MS = 200;

/**
 * Runs `fn` on one connection that holds the table's preparation lock (a session advisory
 * lock), so two processes (two `inbox migrate` at once, a `serve` migrating while the
 * maintenance job runs) prepare a table one after the other: the late index's steps are not
 * each idempotent (two builds at once met "already exists" and "does not exist" and the
 * migration failed). The lock is asked for with a try in a loop, never a blocking wait: a
 * statement blocked on it would hold a snapshot that the holder's CREATE INDEX CONCURRENTLY
 * waits for. The lock ends with its session if the process dies.
 */
async function withPrepareLock<T>(db: AnyDb, table: PartitionedTable, fn: (conn: AnyDb) => Promise<T>): Promise<T> {
  const key = `inbox:partitions:prepare:${table}`;
  return db.connection().execute(async (conn) => {
    while (!(await tryLockKeyForSession(conn, key))) await new Promise((resolve) => setTimeout(resolve, PREPARE_LOCK_POLL_MS));
    try {
      return await fn(conn);
    } finally {
      await unlockKeyForSession(conn, key);
    }
  });
}

async function prepareLocked(
  db: AnyDb,
  table: PartitionedTable,
  now: Date,
  options: { daysAhead?: number; legacyMaxRows?: number },
): Promise<Prepared> {
  let partitions = await listPartitions(db, table);
  let convertedLegacy = false;
  const legacy = partitions.find((p) => p.isDefault && p.name === `${table}_legacy`);
  const small = (legacy?.estimatedRows ?? 0) <= (options.legacyMaxRows ?? Number.POSITIVE_INFINITY);
  if (small && !(await lateIndexReady(db, table))) {
    // Without it a new day would lack the index its lookups by id need: no day is made yet.
    const made = await buildLateIndex(db, table).catch((err: unknown) => {
      if (isLockTimeout(err)) return false;
      throw err;
    });
    if (!made) return { created: [], convertedLegacy };
  }
  if (!small && !(await lateIndexReady(db, table))) return { created: [], convertedLegacy };
  if (legacy && small) {
    convertedLegacy = await convertLegacy(db, table, now).catch((err: unknown) => {
      if (isLockTimeout(err)) return false;
      throw err;
    });
    partitions = await listPartitions(db, table);
  }
  if (partitions.some((p) => p.isDefault && p.name === `${table}_legacy`)) return { created: [], convertedLegacy };
  const created: string[] = [];
  const covered = (ms: number) => partitions.some((p) => !p.isDefault && (p.from ?? 0) <= ms && ms < (p.to ?? 0));
  const today = dayStart(now.getTime());
  for (let day = today; day <= today + (options.daysAhead ?? PARTITION_DAYS_AHEAD) * DAY_MS; day += DAY_MS) {
    if (covered(day)) continue;
    const made = await createDay(db, table, day).catch((err: unknown) => {
      if (isLockTimeout(err)) return false; // days are made a week ahead: the next run makes it
      throw err;
    });
    if (made) created.push(dayName(table, day));
  }
  return { created, convertedLegacy };
}

const lateIndexName = (table: string) => `${table}_id_key`;

/** The table's late unique index exists and covers every partition (or it has none to make). */
async function lateIndexReady(db: AnyDb, table: PartitionedTable): Promise<boolean> {
  if (!LATE_UNIQUE_INDEXES[table]) return true;
  const { rows } = await sql<{ valid: boolean | null }>`
    SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass(${lateIndexName(table)})`.execute(db);
  return rows[0]?.valid === true;
}

/**
 * Makes the table's late unique index: ON ONLY the parent (a moment's lock), then on each
 * partition CONCURRENTLY and attached; the parent's is valid once every partition's is.
 */
async function buildLateIndex(db: AnyDb, table: PartitionedTable): Promise<boolean> {
  const columns = sql.raw(LATE_UNIQUE_INDEXES[table]!);
  const parent = lateIndexName(table);
  await ddlStep(db, table, (trx) =>
    sql`CREATE UNIQUE INDEX IF NOT EXISTS ${sql.ref(parent)} ON ONLY ${sql.table(table)} (${columns})`.execute(trx),
  );
  for (const p of await listPartitions(db, table)) {
    const { rows } = await sql<{ attached: boolean }>`
      SELECT EXISTS (
        SELECT 1 FROM pg_inherits i JOIN pg_index x ON x.indexrelid = i.inhrelid
        WHERE i.inhparent = ${parent}::regclass AND x.indrelid = ${p.name}::regclass) AS attached`.execute(db);
    if (rows[0]?.attached) continue;
    const own = `${p.name}_id_key`;
    // A build interrupted before (a process stopped) leaves an invalid index: built again.
    const { rows: left } = await sql<{ valid: boolean }>`
      SELECT indisvalid AS valid FROM pg_index WHERE indexrelid = to_regclass(${own})`.execute(db);
    if (left[0] && !left[0].valid) await sql`DROP INDEX CONCURRENTLY ${sql.ref(own)}`.execute(db);
    if (!left[0]?.valid) await sql`CREATE UNIQUE INDEX CONCURRENTLY ${sql.ref(own)} ON ${sql.table(p.name)} (${columns})`.execute(db);
    await ddlStep(db, table, (trx) => sql`ALTER INDEX ${sql.ref(parent)} ATTACH PARTITION ${sql.ref(own)}`.execute(trx));
  }
  // The old table's primary key (id) is now one more index entry on every row written there
  // (until its range is behind retention): (id, event_id) serves a lookup by id as well.
  const { rows: keys } = await sql<{ table: string; name: string }>`
    SELECT conrelid::regclass::text AS table, conname AS name FROM pg_constraint
    WHERE contype = 'p' AND conrelid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = ${table}::regclass)`.execute(db);
  for (const k of keys)
    await ddlStep(db, table, (trx) => sql`ALTER TABLE ${sql.table(k.table)} DROP CONSTRAINT ${sql.ref(k.name)}`.execute(trx));
  return lateIndexReady(db, table);
}

/**
 * `column`, a partition key, is one of `ids`, in a form that keeps a statement's planning and
 * start-up to the days the ids lie in (docs/performance.md, "The compare on the partitioned
 * inbox"). Without a bound on the key the planner keeps every day: an UPDATE … FROM unnest
 * then opens, locks and probes each day's partition for each row. Given the ids as a constant
 * array it prunes by each of them, a step per id (250 in a batch), which doubled the planning
 * of a batch's statements. So the ids go in as the value of a subquery, which the planner does
 * not look into (the index still probes exactly them), and the lowest and highest id, two
 * constants, say which days they reach. A UUID sorts as its canonical lowercase text does.
 */
export function partitionKeyIn(column: string, ids: string[]) {
  const ref = sql.ref(column);
  let lo: string | undefined;
  let hi: string | undefined;
  for (const id of ids) {
    // Already lowercase (every id uuid7 makes): toLowerCase would copy it all the same.
    const lower = CANONICAL_UUID.test(id);
    const v = lower ? id : id.toLowerCase();
    // Another spelling PostgreSQL reads as a UUID (braces, no hyphens) does not sort as it does.
    if (!lower && !CANONICAL_UUID.test(v)) return sql<boolean>`${ref} = ANY(${arrayLiteral(ids)}::uuid[])`;
    if (lo === undefined || v < lo) lo = v;
    if (hi === undefined || v > hi) hi = v;
  }
  // One array parameter, not one per id: a batch names 250.
  return sql<boolean>`(${ref} = ANY((SELECT ${arrayLiteral(ids)}::uuid[])::uuid[]) AND ${ref} BETWEEN ${lo ?? null}::uuid AND ${hi ?? null}::uuid)`;
}

const CANONICAL_UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/**
 * The legacy table, the DEFAULT partition, becomes the range (MINVALUE, bound) with bound the
 * start of the day after tomorrow: ids made until then still fit it while this runs. Rows at
 * or above the bound (ids of another UUID version from older releases, a clock far ahead)
 * wait in a side table and go back through the parent once the new DEFAULT exists.
 */
async function convertLegacy(db: AnyDb, table: PartitionedTable, now: Date): Promise<boolean> {
  const legacy = `${table}_legacy`;
  const check = `${legacy}_range`;
  const aside = `${legacy}_aside`;
  const key = sql.ref(PARTITION_KEYS[table]);
  const bound = uuid7Floor(dayStart(now.getTime()) + 2 * DAY_MS);
  // Attempts written before their event_id existed have none: until retention has deleted
  // them the table stays the DEFAULT. Found at once while they last (they are the oldest
  // rows), so a maintenance run does not read the table for a check bound to fail.
  const { rows: unkeyed } = await sql<{ yes: boolean }>`
    SELECT EXISTS (SELECT 1 FROM ${sql.table(legacy)} WHERE ${key} IS NULL) AS yes`.execute(db);
  if (unkeyed[0]?.yes) return false;
  const started = await ddlStep(db, table, async (trx) => {
    if (!(await legacyIsDefault(trx, table))) return false;
    await sql`CREATE TABLE IF NOT EXISTS ${sql.table(aside)} (LIKE ${sql.table(table)})`.execute(trx);
    await sql`
      WITH moved AS (DELETE FROM ${sql.table(legacy)} WHERE ${key} >= ${bound}::uuid RETURNING *)
      INSERT INTO ${sql.table(aside)} SELECT * FROM moved`.execute(trx);
    await sql`ALTER TABLE ${sql.table(legacy)} DROP CONSTRAINT IF EXISTS ${sql.ref(check)}`.execute(trx);
    // IS NOT NULL too: a range holds no NULL key, and the attach must be proved by this check
    // alone (attempts written before their event_id existed have none).
    await sql`
      ALTER TABLE ${sql.table(legacy)} ADD CONSTRAINT ${sql.ref(check)}
      CHECK (${key} IS NOT NULL AND ${key} < ${sql.lit(bound)}::uuid) NOT VALID`.execute(trx);
    return true;
  });
  if (!started) return false;
  // SHARE UPDATE EXCLUSIVE: inserts and updates go on while the table is read.
  const valid = await db
    .transaction()
    .execute(async (trx) => {
      await sql`SET LOCAL statement_timeout = 0`.execute(trx);
      await sql`ALTER TABLE ${sql.table(legacy)} VALIDATE CONSTRAINT ${sql.ref(check)}`.execute(trx);
      return true;
    })
    .catch((err: unknown) => {
      // A row without its key (an attempt older than its event_id column): the table stays the
      // DEFAULT, and row retention deletes such rows; a later run converts it.
      if ((err as { code?: string }).code === '23514') return false;
      throw err;
    });
  if (!valid) {
    await ddlStep(db, table, async (trx) => {
      await sql`ALTER TABLE ${sql.table(legacy)} DROP CONSTRAINT IF EXISTS ${sql.ref(check)}`.execute(trx);
      await sql`INSERT INTO ${sql.table(table)} OVERRIDING SYSTEM VALUE SELECT * FROM ${sql.table(aside)}`.execute(trx);
      await sql`DROP TABLE ${sql.table(aside)}`.execute(trx);
    });
    return false;
  }
  // The valid CHECK implies the new range, so the attach reads neither table; the only scan
  // is of the new, empty DEFAULT.
  return ddlStep(db, table, async (trx) => {
    if (!(await legacyIsDefault(trx, table))) return false;
    await sql`ALTER TABLE ${sql.table(table)} DETACH PARTITION ${sql.table(legacy)}`.execute(trx);
    await sql`CREATE TABLE ${sql.table(`${table}_default`)} PARTITION OF ${sql.table(table)} DEFAULT`.execute(trx);
    await sql`
      ALTER TABLE ${sql.table(table)} ATTACH PARTITION ${sql.table(legacy)}
      FOR VALUES FROM (MINVALUE) TO (${sql.lit(bound)})`.execute(trx);
    // The ids of identity columns are kept as they were.
    await sql`INSERT INTO ${sql.table(table)} OVERRIDING SYSTEM VALUE SELECT * FROM ${sql.table(aside)}`.execute(trx);
    await sql`DROP TABLE ${sql.table(aside)}`.execute(trx);
    return true;
  });
}

/**
 * One day's partition. Made as a table of its own and attached, so that rows of that day
 * already in the DEFAULT (a clock running days ahead) move into it first instead of failing
 * the attach; the attach reads the DEFAULT, which holds only such stray and kept rows.
 */
async function createDay(db: AnyDb, table: PartitionedTable, day: number): Promise<boolean> {
  const name = dayName(table, day);
  const key = sql.ref(PARTITION_KEYS[table]);
  const from = uuid7Floor(day);
  const to = uuid7Floor(day + DAY_MS);
  return ddlStep(db, table, async (trx) => {
    const { rows } = await sql<{ made: boolean }>`SELECT to_regclass(${name}) IS NOT NULL AS made`.execute(trx);
    if (rows[0]?.made) return false;
    await sql`CREATE TABLE ${sql.table(name)} (LIKE ${sql.table(table)} INCLUDING DEFAULTS INCLUDING CONSTRAINTS)`.execute(trx);
    await sql`
      WITH moved AS (DELETE FROM ${sql.table(`${table}_default`)} WHERE ${key} >= ${from}::uuid AND ${key} < ${to}::uuid RETURNING *)
      INSERT INTO ${sql.table(name)} SELECT * FROM moved`.execute(trx);
    await sql`ALTER TABLE ${sql.table(table)} ATTACH PARTITION ${sql.table(name)} FOR VALUES FROM (${sql.lit(from)}) TO (${sql.lit(to)})`.execute(
      trx,
    );
    return true;
  });
}

export interface DroppedPartitions {
  dropped: string[];
  /** Rows of the dropped days that had to stay, moved into the DEFAULT partition. */
  kept: number;
  /** Expired days left in place (a lock not granted in time, too many rows to keep). */
  skipped: string[];
}

/**
 * Drops every partition whose whole range lies before `before` (day partitions and the
 * legacy range), keeping the rows `keep` selects: they are copied aside while only the
 * expired partition is locked, then, in a transaction that locks the parent for a moment,
 * the partition is detached (its range is free again, so the kept rows land in the DEFAULT
 * when inserted through the parent) and dropped. Dropping writes next to no WAL, whatever the
 * day's size; deleting its rows writes each one.
 */
export async function dropExpiredPartitions(
  db: AnyDb,
  table: PartitionedTable,
  before: Date,
  keep: RawBuilder<boolean>,
): Promise<DroppedPartitions> {
  const result: DroppedPartitions = { dropped: [], kept: 0, skipped: [] };
  const expired = (await listPartitions(db, table)).filter((p) => !p.isDefault && p.to !== undefined && p.to <= before.getTime());
  for (const p of expired) {
    try {
      const kept = await ddlStep(db, table, async (trx) => {
        const { rows: gone } = await sql<{ gone: boolean }>`SELECT to_regclass(${p.name}) IS NULL AS gone`.execute(trx);
        if (gone[0]?.gone) return 0;
        await sql`SET LOCAL statement_timeout = 0`.execute(trx);
        // Writes to this day stop (they are rare: a requeue, a late processing) while its rows
        // to keep are read; the other days, and the inserts of today, go on.
        await sql`LOCK TABLE ${sql.table(p.name)} IN SHARE ROW EXCLUSIVE MODE`.execute(trx);
        const aside = `${p.name}_kept`;
        // `expired` names the day's row, for a `keep` that looks at other tables.
        await sql`CREATE TEMP TABLE ${sql.table(aside)} ON COMMIT DROP AS SELECT * FROM ${sql.table(p.name)} AS expired WHERE ${keep}`.execute(
          trx,
        );
        const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM ${sql.table(aside)}`.execute(trx);
        const n = rows[0]?.n ?? 0;
        if (n > MAX_KEPT_ROWS) return undefined;
        await sql`ALTER TABLE ${sql.table(table)} DETACH PARTITION ${sql.table(p.name)}`.execute(trx);
        await sql`INSERT INTO ${sql.table(table)} OVERRIDING SYSTEM VALUE SELECT * FROM ${sql.table(aside)}`.execute(trx);
        await sql`DROP TABLE ${sql.table(p.name)}`.execute(trx);
        return n;
      });
      if (kept === undefined) result.skipped.push(p.name);
      else {
        result.dropped.push(p.name);
        result.kept += kept;
      }
    } catch (err) {
      if (!isLockTimeout(err)) throw err;
      result.skipped.push(p.name);
    }
  }
  return result;
}

/**
 * The partitions whose rows retention still deletes one by one: the DEFAULT (stray and kept
 * rows) and the legacy table while it lives. Day partitions go whole.
 */
export async function rowRetentionPartitions(db: AnyDb, table: PartitionedTable): Promise<string[]> {
  return (await listPartitions(db, table)).filter((p) => p.isDefault || p.name === `${table}_legacy`).map((p) => p.name);
}
