import { type Kysely, Migrator, sql } from 'kysely';
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
  return (await listing(() => migrator.getMigrations())).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** How often a migrator's listing of the tables is asked again after a table vanished under it. */
const LISTING_ATTEMPTS = 5;

/**
 * Runs `fn`, asking again when it fails on a table that vanished (42P01) before anything was
 * written. Kysely's migrator lists every table of the schema, without a lock, before it takes
 * its own: another process's partition step creating and dropping a table at that moment
 * (`…_legacy_aside`) failed the listing, and one of three `inbox migrate` at once exited 1.
 */
async function listing<T>(fn: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if ((err as { code?: string }).code !== '42P01' || attempt >= LISTING_ATTEMPTS) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

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
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await listing(async () => {
    const run = await migrator.migrateToLatest();
    // No results: it failed before running any migration, where the listing happens.
    if (run.error !== undefined && run.results === undefined) throw run.error;
    return run;
  });
  if (error) throw error instanceof Error ? error : new Error(String(error));
  for (const table of PARTITIONED_TABLES) {
    await preparePartitions(db, table, new Date(), { legacyMaxRows: LEGACY_ROWS_CONVERTED_AT_MIGRATION });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
