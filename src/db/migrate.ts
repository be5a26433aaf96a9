import { type Kysely, Migrator } from 'kysely';
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
  return (await migrator.getMigrations()).filter((m) => m.executedAt === undefined).map((m) => m.name);
}

/** Applies every pending migration. Safe to run from several processes at once (Kysely locks). */
// biome-ignore lint/suspicious/noExplicitAny: migrations run before the schema they create exists
export async function migrateToLatest(db: Kysely<any>): Promise<string[]> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: async () => migrations },
  });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  for (const table of PARTITIONED_TABLES) {
    await preparePartitions(db, table, new Date(), { legacyMaxRows: LEGACY_ROWS_CONVERTED_AT_MIGRATION });
  }
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
