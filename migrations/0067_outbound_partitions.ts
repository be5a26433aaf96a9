import { type Kysely, sql } from 'kysely';

// Frozen in time: this file never imports from src/.
// The outbound webhook tables become tables partitioned by day (docs/operations.md,
// "Partitions"), as webhook_inbox did in 0066, so that retention drops a day's partitions
// instead of deleting its rows one by one. All three are keyed by the EVENT's UUIDv7 id:
// webhook_events on id, webhook_deliveries on event_id, and webhook_attempts on a new
// event_id (its delivery's). A delivery is written in its event's transaction, so an event,
// its deliveries and their attempts lie in the same day and go together.
//
// The foreign keys deliveries → events and attempts → deliveries go: PostgreSQL refuses to
// detach or drop a partition of a referenced table while a row references it. Retention drops
// a day of attempts, then of deliveries, then of events; deleting an endpoint deletes its
// deliveries' attempts itself; erasing a contact deletes its events' deliveries and attempts.
//
// As in 0066 no row is copied or read under this migration's lock: each old table is renamed
// to <table>_legacy, a partitioned table with the same columns and indexes is created, and the
// old one is attached as its DEFAULT partition, which needs no scan (its indexes are adopted,
// its foreign key to webhook_endpoints is taken as the parent's). Identity columns (delivery
// and attempt ids, the event log's seq) move to the parent, going on from where they were: the
// ids are the delivery headers and the API's ids. The unique index (id, event_id) of deliveries
// and attempts has nothing to adopt, so it is built after this migration, CONCURRENTLY, and
// the attempts' event_id of old rows stays NULL: such rows stay in the DEFAULT until retention
// deletes them (src/db/partitions.ts).

interface Table {
  name: string;
  key: string;
  /** The identity column, which moves to the parent. */
  identity: string;
  /** The old table's indexes, renamed with `_legacy` so the parent's take their names. */
  indexes: string[];
  create: string;
}

const TABLES: Table[] = [
  {
    name: 'webhook_events',
    key: 'id',
    identity: 'seq',
    indexes: ['webhook_events_pkey', 'webhook_events_log'],
    create: `
      ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id);
      CREATE INDEX webhook_events_log ON webhook_events (workspace_id, txid, seq);`,
  },
  {
    name: 'webhook_deliveries',
    key: 'event_id',
    identity: 'id',
    indexes: ['webhook_deliveries_endpoint', 'webhook_deliveries_event'],
    create: `
      ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey
        FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE;
      CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
      CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);`,
  },
  {
    name: 'webhook_attempts',
    key: 'event_id',
    identity: 'id',
    indexes: ['webhook_attempts_delivery'],
    create: `CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);`,
  },
];

async function nextValue(db: Kysely<unknown>, table: string, column: string): Promise<string> {
  const { rows } = await sql<{ n: string }>`SELECT nextval(pg_get_serial_sequence(${table}, ${column}))::text AS n`.execute(db);
  return rows[0]!.n;
}

export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    ALTER TABLE webhook_deliveries DROP CONSTRAINT webhook_deliveries_event_id_fkey;
    ALTER TABLE webhook_attempts DROP CONSTRAINT webhook_attempts_delivery_id_fkey;
    ALTER TABLE webhook_attempts ADD COLUMN event_id uuid;
    COMMENT ON COLUMN webhook_attempts.event_id IS 'the event of its delivery: the partition key, as for webhook_deliveries';
  `.execute(db);
  for (const t of TABLES) {
    const legacy = `${t.name}_legacy`;
    const start = await nextValue(db, t.name, t.identity);
    await sql.raw(`ALTER TABLE ${t.name} RENAME TO ${legacy}`).execute(db);
    for (const index of t.indexes) await sql.raw(`ALTER INDEX ${index} RENAME TO ${index}_legacy`).execute(db);
    await sql
      .raw(`
        ALTER TABLE ${legacy} ALTER COLUMN ${t.identity} DROP IDENTITY;
        CREATE TABLE ${t.name} (LIKE ${legacy} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS)
          PARTITION BY RANGE (${t.key});
        ALTER TABLE ${t.name} ALTER COLUMN ${t.identity} ADD GENERATED ALWAYS AS IDENTITY (START WITH ${start});
        ${t.create}
        ALTER TABLE ${t.name} ATTACH PARTITION ${legacy} DEFAULT;`)
      .execute(db);
  }
}

/** Back to one table each: the partitions' rows are copied into it (a rewrite, under lock). */
export async function down(db: Kysely<unknown>): Promise<void> {
  for (const t of TABLES) {
    const start = await nextValue(db, t.name, t.identity);
    await sql
      .raw(`
        CREATE TABLE ${t.name}_whole (LIKE ${t.name} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING COMMENTS);
        INSERT INTO ${t.name}_whole SELECT * FROM ${t.name};
        DROP TABLE ${t.name};
        ALTER TABLE ${t.name}_whole RENAME TO ${t.name};
        ALTER TABLE ${t.name} ALTER COLUMN ${t.identity} ADD GENERATED ALWAYS AS IDENTITY (START WITH ${start});`)
      .execute(db);
  }
  await sql`
    ALTER TABLE webhook_events ADD CONSTRAINT webhook_events_pkey PRIMARY KEY (id);
    CREATE INDEX webhook_events_log ON webhook_events (workspace_id, txid, seq);
    ALTER TABLE webhook_deliveries ADD CONSTRAINT webhook_deliveries_pkey PRIMARY KEY (id);
    CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, id DESC);
    CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id);
    ALTER TABLE webhook_deliveries
      ADD CONSTRAINT webhook_deliveries_endpoint_id_fkey FOREIGN KEY (endpoint_id) REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
      ADD CONSTRAINT webhook_deliveries_event_id_fkey FOREIGN KEY (event_id) REFERENCES webhook_events(id) ON DELETE CASCADE;
    ALTER TABLE webhook_attempts DROP COLUMN event_id;
    ALTER TABLE webhook_attempts ADD CONSTRAINT webhook_attempts_pkey PRIMARY KEY (id);
    CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, id);
    ALTER TABLE webhook_attempts
      ADD CONSTRAINT webhook_attempts_delivery_id_fkey FOREIGN KEY (delivery_id) REFERENCES webhook_deliveries(id) ON DELETE CASCADE;
  `.execute(db);
}
