import { type Kysely, type Migration, Migrator, sql } from 'kysely';
import { migrations } from '../../migrations/index.js';
import { PARTITIONED_TABLES, preparePartitions } from './partitions.js';

/**
 * Right after migrating, the days ahead are made, and a pre-partitioning table this large at
 * most becomes a range of its own at once (its check reads it whole); a larger one is left to
 * the maintenance job, which reads it while the service runs.
 */
const LEGACY_ROWS_CONVERTED_AT_MIGRATION = 1_000_000;

/** The names of the migrations of this version the database has not applied yet. */
// biome-ignore lint/suspicious/noExplicitAny: read before the schema may exist
export async function pendingMigrations(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => migrations } });
  return (await retried(() => migrator.getMigrations())).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** How often a migrator's run is tried when it failed for a reason that passes (below). */
const MIGRATE_ATTEMPTS = 5;

/**
 * Runs `fn` (a migrator's listing or run), trying again when it failed for a reason another
 * process caused and that left nothing written:
 * - a table that vanished (42P01) while the migrator listed every table of the schema, which
 *   it does without a lock before it takes its own: another process's partition step creating
 *   and dropping a table at that moment (`…_legacy_aside`) failed the listing, and one of three
 *   `inbox migrate` at once exited 1. `fn` throws it only from the listing.
 * - a deadlock (40P01) with a process of the older version still writing the tables a
 *   migration alters: PostgreSQL aborts one of the two, and the migrations run in one
 *   transaction, so an aborted run rolled back whole. Seen once in an upgrade rehearsal, with
 *   0.2.0 workers running, as `inbox migrate` exiting 1.
 */
async function retried<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      const code = (err as { code?: string }).code;
      if ((code !== '42P01' && code !== DEADLOCK) || attempt >= MIGRATE_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, (code === DEADLOCK ? 200 : 20) * attempt));
    }
  }
}

const DEADLOCK = '40P01';

/**
 * The migrations the database has applied that this version does not know: a database that a
 * newer version migrated (a rollback, or an old process restarted during a rolling upgrade).
 */
// biome-ignore lint/suspicious/noExplicitAny: read before the schema may exist
export async function unknownMigrations(db: Kysely<any>): Promise<string[]> {
  const { rows } = await sql<{ name: string }>`
    SELECT name FROM kysely_migration ORDER BY name`
    .execute(db)
    .catch((err: { code?: string }) => {
      if (err.code === '42P01') return { rows: [] }; // no migration has run yet
      throw err;
    });
  return rows.map((r) => r.name).filter((name) => !(name in migrations));
}

/** Applies every pending migration. Safe to run from several processes at once (Kysely locks). */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const applied = await runMigrations(db, migrations);
  for (const table of PARTITIONED_TABLES) {
    await preparePartitions(db, table, new Date(), { legacyMaxRows: LEGACY_ROWS_CONVERTED_AT_MIGRATION });
  }
  return applied;
}

/** The migrator's part of migrateToLatest, on any set of migrations; the names it applied. */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
export async function runMigrations(db: Kysely<any>, all: Record<string, Migration>): Promise<string[]> {
  const migrator = new Migrator({ db, provider: { getMigrations: async () => all } });
  const { error, results } = await retried(async () => {
    const run = await migrator.migrateToLatest();
    // No results: it failed before running any migration, where the listing happens. A
    // deadlock rolled the run's one transaction back: nothing of it stays either.
    if (run.error !== undefined && (run.results === undefined || (run.error as { code?: string }).code === DEADLOCK)) throw run.error;
    return run;
  });
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
