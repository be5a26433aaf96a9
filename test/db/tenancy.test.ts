import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../helpers/db.js';

/*
 * Sharding by workspace (docs/scaling.md) needs every row of tenant data to name its workspace
 * and every tenant query to filter by it. This walks the migrated schema and the SQL in src/ so
 * that a new table or query that forgets the workspace fails here rather than on a Citus cluster.
 */

/** Tables that hold no tenant's data, or that a workspace cannot own. */
const GLOBAL_TABLES: Record<string, string> = {
  workspaces: 'the tenant root itself: its id is the workspace_id of every other row',
  kysely_migration: 'migration bookkeeping, one copy per database',
  kysely_migration_lock: 'migration bookkeeping, one copy per database',
  login_attempts: 'throttles sign-in by e-mail and IP before any workspace is known',
  rate_limit_hits: 'operator-level throttling buckets (per IP, per key), not owned by a workspace',
  webhook_tokens: "providers' one-time replay tokens, checked before a delivery is resolved to a workspace",
  early_receipts: 'receipts naming no message yet, so no workspace either; matched by integration and provider id, kept an hour',
};

/**
 * Tenant data that names its workspace only through a parent row today. Each entry says the
 * column that leads to the parent; sharding needs workspace_id copied onto these first.
 */
const VIA_PARENT: Record<string, { column: string; parent: string; foreignKey: boolean }> = {
  account_tokens: { column: 'user_id', parent: 'users', foreignKey: true },
  auth_codes: { column: 'user_id', parent: 'users', foreignKey: true },
  personal_access_tokens: { column: 'user_id', parent: 'users', foreignKey: true },
  recovery_codes: { column: 'user_id', parent: 'users', foreignKey: true },
  sessions: { column: 'user_id', parent: 'users', foreignKey: true },
  notification_mail_queue: { column: 'user_id', parent: 'users', foreignKey: true },
  notification_mail_times: { column: 'user_id', parent: 'users', foreignKey: true },
  user_assignment_times: { column: 'user_id', parent: 'users', foreignKey: true },
  team_members: { column: 'team_id', parent: 'teams', foreignKey: true },
  imap_mailbox_state: { column: 'connection_id', parent: 'connections', foreignKey: true },
  imap_messages: { column: 'connection_id', parent: 'connections', foreignKey: true },
  telegram_webhook_secrets: { column: 'connection_id', parent: 'connections', foreignKey: true },
  whatsapp_templates: { column: 'connection_id', parent: 'connections', foreignKey: true },
  webhook_deliveries: { column: 'endpoint_id', parent: 'webhook_endpoints', foreignKey: true },
  // No foreign key: a day of deliveries is dropped whole, which a referencing table would forbid.
  webhook_attempts: { column: 'delivery_id', parent: 'webhook_deliveries', foreignKey: false },
  // Keyed by workspaces.app_id without a foreign key: a delivery is stored before it is resolved.
  webhook_inbox: { column: 'app_id', parent: 'workspaces', foreignKey: false },
  idempotency_keys: { column: 'app_id', parent: 'workspaces', foreignKey: false },
  // Chunks are found by attachments.storage_key (and exports.storage_key), not by a foreign key.
  attachment_chunks: { column: 'storage_key', parent: 'attachments', foreignKey: false },
};

/** Tenant tables whose workspace_id may be NULL, with why. */
const NULLABLE_WORKSPACE: Record<string, string> = {
  audit_log: "the operator's own actions belong to no workspace",
};

/** Tenant tables whose workspace_id is no foreign key to workspaces, with why. */
const NO_WORKSPACE_FOREIGN_KEY: Record<string, string> = {
  messages: "one or more per delivery: written with its thread's workspace, and its key to the thread goes with the thread's",
  thread_labels: "a lookup copy of threads.labels, rewritten with its thread's labels",
  user_sockets: 'live sockets; rows expire within seconds and go with their user',
  webhook_events: "the event log, 2–3 rows per delivery: written with the id of the change's own workspace, in its transaction",
};

/** Tenant tables without an index led by workspace_id, with how they are reached instead. */
const NO_WORKSPACE_INDEX: Record<string, string> = {
  attachments: 'read by id and by message_id; a workspace never lists its attachments',
  exports: 'read by id and swept by expires_at; a workspace has a handful',
  livechat_visitors: 'read by token_hash, contact_id and ip',
  notifications: 'read by user_id, and a user belongs to one workspace',
  sso_logins: 'read by state_hash during one sign-in, swept by expires_at',
  user_sockets: 'read by user_id and swept by expires_at; rows live for seconds',
};

interface Schema {
  tables: string[];
  columns: Map<string, Map<string, { nullable: boolean }>>;
  /** Per table, the first column of each index (null for an expression). */
  indexLeads: Map<string, (string | null)[]>;
  /** "table.column -> parent" for every single-column foreign key. */
  foreignKeys: Set<string>;
}

async function readSchema(url: string): Promise<Schema> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    // A partition (webhook_inbox's days) holds its parent's rows: the parent is the table checked.
    const tables = await client.query<{ name: string }>(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'public'
        WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY 1`,
    );
    const columns = await client.query<{ table: string; column: string; nullable: string }>(
      `SELECT table_name AS table, column_name AS column, is_nullable AS nullable
         FROM information_schema.columns WHERE table_schema = 'public'`,
    );
    const indexes = await client.query<{ table: string; lead: string | null }>(
      `SELECT t.relname AS table, a.attname AS lead
         FROM pg_index i
         JOIN pg_class t ON t.oid = i.indrelid
         JOIN pg_namespace n ON n.oid = t.relnamespace AND n.nspname = 'public'
         LEFT JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = i.indkey[0]`,
    );
    const keys = await client.query<{ table: string; column: string; parent: string }>(
      `SELECT c.conrelid::regclass::text AS table, a.attname AS column, c.confrelid::regclass::text AS parent
         FROM pg_constraint c
         JOIN pg_attribute a ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]
        WHERE c.contype = 'f' AND c.connamespace = 'public'::regnamespace AND cardinality(c.conkey) = 1`,
    );
    const schema: Schema = { tables: tables.rows.map((r) => r.name), columns: new Map(), indexLeads: new Map(), foreignKeys: new Set() };
    for (const r of columns.rows) {
      const cols = schema.columns.get(r.table) ?? new Map();
      cols.set(r.column, { nullable: r.nullable === 'YES' });
      schema.columns.set(r.table, cols);
    }
    for (const r of indexes.rows) schema.indexLeads.set(r.table, [...(schema.indexLeads.get(r.table) ?? []), r.lead]);
    for (const r of keys.rows) schema.foreignKeys.add(`${r.table}.${r.column} -> ${r.parent}`);
    return schema;
  } finally {
    await client.end();
  }
}

/** The tables that carry workspace_id; every rule about the schema, as a list of complaints. */
function schemaProblems(schema: Schema): { tenant: string[]; problems: string[] } {
  const problems: string[] = [];
  const tenant: string[] = [];
  for (const table of schema.tables) {
    const cols = schema.columns.get(table) ?? new Map();
    const ws = cols.get('workspace_id');
    if (table in GLOBAL_TABLES) {
      if (ws) problems.push(`${table} is listed as global but has workspace_id: drop it from GLOBAL_TABLES`);
      continue;
    }
    if (table in VIA_PARENT) {
      const via = VIA_PARENT[table]!;
      if (ws) problems.push(`${table} now has workspace_id: move it from VIA_PARENT to the tenant tables`);
      else if (!cols.has(via.column)) problems.push(`${table} has no ${via.column} leading to ${via.parent}`);
      else if (via.foreignKey && !schema.foreignKeys.has(`${table}.${via.column} -> ${via.parent}`))
        problems.push(`${table}.${via.column} is no longer a foreign key to ${via.parent}`);
      continue;
    }
    if (!ws) {
      problems.push(
        `${table} has no workspace_id column: tenant data must name its workspace (or list the table in GLOBAL_TABLES with a reason)`,
      );
      continue;
    }
    tenant.push(table);
    if (ws.nullable && !(table in NULLABLE_WORKSPACE)) problems.push(`${table}.workspace_id must be NOT NULL`);
    const exempt = table in NULLABLE_WORKSPACE || table in NO_WORKSPACE_FOREIGN_KEY;
    if (!exempt && !schema.foreignKeys.has(`${table}.workspace_id -> workspaces`))
      problems.push(`${table}.workspace_id has no foreign key to workspaces`);
    const led = (schema.indexLeads.get(table) ?? []).includes('workspace_id');
    if (!led && !(table in NO_WORKSPACE_INDEX)) problems.push(`${table} has no index whose first column is workspace_id`);
    if (led && table in NO_WORKSPACE_INDEX) problems.push(`${table} now has a workspace_id index: drop it from NO_WORKSPACE_INDEX`);
  }
  for (const listed of [...Object.keys(GLOBAL_TABLES), ...Object.keys(VIA_PARENT)])
    if (!schema.tables.includes(listed)) problems.push(`${listed} is listed but no longer exists`);
  return { tenant, problems };
}

/**
 * Mentions of a tenant table in src/ whose statement neither names workspace_id nor looks up
 * ids the caller passes (`where('id', '=', …)`, `thread_id = ${…}`, `unnest(${ids})`), counted
 * per file and table, with why they read or write across workspaces. Inserts are left to the
 * schema (workspace_id is NOT NULL). A lookup by id is trusted to carry an id the caller read
 * within its workspace: that, a static scan cannot prove.
 */
const FRAGMENT = 'a fragment joined to a row of its enclosing statement, which filters by workspace';

const CROSS_WORKSPACE: Record<string, { count: number; reason: string }> = {
  'src/attachments/attachments.queries.ts attachments': { count: 2, reason: 'maintenance: sweeps unused uploads of every workspace' },
  'src/audit/audit.queries.ts audit_log': { count: 3, reason: "operator's audit list and the retention sweep" },
  'src/auth/sso.queries.ts sso_logins': { count: 1, reason: 'sweeps expired sign-in states' },
  'src/connections/connections.queries.ts connections': {
    count: 2,
    reason: "operator's list of connections; a webhook is resolved by its connection key",
  },
  'src/connections/telegram-webhook.queries.ts connections': { count: 1, reason: 'a webhook is resolved by its secret' },
  'src/contacts/contacts.queries.ts contact_handles': { count: 1, reason: FRAGMENT },
  'src/messaging/messaging.queries.ts contacts': { count: 1, reason: FRAGMENT },
  'src/messaging/messaging.queries.ts teams': { count: 1, reason: FRAGMENT },
  'src/reports/reports.queries.ts threads': { count: 1, reason: FRAGMENT },
  'src/exports/exports.queries.ts exports': { count: 2, reason: 'maintenance: sweeps expired exports' },
  'src/livechat/livechat.queries.ts livechat_visitors': { count: 1, reason: 'abuse limit per visitor IP across workspaces' },
  'src/mailboxes/mailboxes.queries.ts connections': { count: 1, reason: 'worker: polls every IMAP mailbox' },
  'src/maintenance/maintenance.queries.ts livechat_visitors': { count: 1, reason: 'maintenance: counts expired visitors' },
  'src/replies/send-claim.queries.ts messages': { count: 1, reason: 'worker: refreshes its own claim token' },
  'src/threads/search-index.ts messages': { count: 2, reason: 'worker: indexes unindexed messages of every workspace' },
  'src/threads/search.queries.ts messages': { count: 1, reason: 'estimate of a search; the caller intersects with its workspace' },
  'src/threads/threads.queries.ts threads': { count: 1, reason: 'a view builder: callers add the workspace filter' },
  'src/users/presence.ts user_sockets': { count: 2, reason: 'worker: sweeps expired sockets of every process' },
  'src/users/presence.ts users': { count: 3, reason: 'worker: marks disconnected users offline everywhere' },
  'src/users/users.queries.ts users': { count: 1, reason: 'sign-in by e-mail, unique across workspaces' },
};

const KEYED_BY_ID =
  /where\(\s*'(?:\w+\.)?(?:id|\w+_id)'\s*,\s*'(?:=|in)'\s*,(?!\s*\w+\s*\.\s*selectFrom)|\b(?:\w+\.)?(?:id|\w+_id)\s*(?:=|IN|= ANY)\s*\(?\s*\$\{|\bunnest\(\s*\$\{/;

/** "file table" -> how many statements touch the table without workspace_id or an id lookup. */
function unscopedStatements(files: { path: string; text: string }[], tenant: string[]): Map<string, number> {
  const found = new Map<string, number>();
  const names = tenant.join('|');
  const touch = new RegExp(
    `(selectFrom|updateTable|deleteFrom|insertInto)\\(\\s*'(${names})(?: as \\w+)?'|\\b(FROM|UPDATE|JOIN|INTO)\\s+(${names})\\b`,
    'g',
  );
  for (const { path, text } of files) {
    for (const m of text.matchAll(touch)) {
      if (m[1] === 'insertInto' || m[3] === 'INTO') continue;
      // The statement around the table: back to the previous statement's end, on to its own.
      const start = Math.max(...[';\n', '{\n', '*/'].map((end) => text.lastIndexOf(end, m.index)), m.index - 1500, 0);
      const rest = text.slice(m.index, m.index + 1500);
      const end = rest.search(/;\s*\n/);
      const statement = text.slice(start, m.index) + (end === -1 ? rest : rest.slice(0, end));
      if (/workspace_id/.test(statement) || KEYED_BY_ID.test(statement)) continue;
      const key = `${path} ${m[2] ?? m[4]}`;
      found.set(key, (found.get(key) ?? 0) + 1);
    }
  }
  return found;
}

function crossWorkspaceProblems(found: Map<string, number>): string[] {
  const problems: string[] = [];
  for (const [key, count] of found) {
    const allowed = CROSS_WORKSPACE[key]?.count ?? 0;
    if (count !== allowed)
      problems.push(
        `${key}: ${count} statement(s) neither filter by workspace_id nor look up a row by id (${allowed} allowed in CROSS_WORKSPACE)`,
      );
  }
  for (const [key, { count }] of Object.entries(CROSS_WORKSPACE))
    if (count > 0 && !found.has(key)) problems.push(`${key}: allowed ${count} but none found; drop it from CROSS_WORKSPACE`);
  return problems;
}

function sourceFiles(dir: string): { path: string; text: string }[] {
  const out: { path: string; text: string }[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    // The console runs in the browser and issues no SQL.
    if (statSync(path).isDirectory()) {
      if (name !== 'console') out.push(...sourceFiles(path));
    } else if (name.endsWith('.ts')) out.push({ path: relative(process.cwd(), path), text: readFileSync(path, 'utf8') });
  }
  return out;
}

describe('tenancy of the schema and the queries', () => {
  let database: TestDatabase;
  let schema: Schema;

  beforeAll(async () => {
    database = await createTestDatabase();
    schema = await readSchema(database.url);
  });
  afterAll(async () => {
    await database?.drop();
  });

  it('every table of public names its workspace, is reached through a parent, or is global', () => {
    const { tenant, problems } = schemaProblems(schema);
    expect(problems).toEqual([]);
    expect(tenant).toContain('threads');
  });

  it('flags a new table without workspace_id and a tenant table without its index', async () => {
    const client = new pg.Client({ connectionString: database.url });
    await client.connect();
    try {
      await client.query('CREATE TABLE canned_snippets (id serial PRIMARY KEY, body text)');
      await client.query(
        'CREATE TABLE saved_views (id serial PRIMARY KEY, workspace_id int NOT NULL REFERENCES workspaces(id), name text)',
      );
    } finally {
      await client.end();
    }
    const { problems } = schemaProblems(await readSchema(database.url));
    expect(problems).toEqual([
      'canned_snippets has no workspace_id column: tenant data must name its workspace (or list the table in GLOBAL_TABLES with a reason)',
      'saved_views has no index whose first column is workspace_id',
    ]);
  });

  it('every statement on a tenant table filters by workspace_id, looks up by id, or says why not', () => {
    const { tenant } = schemaProblems(schema);
    expect(crossWorkspaceProblems(unscopedStatements(sourceFiles('src'), tenant))).toEqual([]);
  });

  it('flags a statement that reads a tenant table across workspaces', () => {
    const { tenant } = schemaProblems(schema);
    const files = [
      {
        path: 'src/example.ts',
        text: [
          "await db.selectFrom('threads').selectAll().where('workspace_id', '=', ws).execute();",
          "await db.selectFrom('threads').selectAll().where('id', '=', threadId).execute();",
          "await db.insertInto('threads').values(row).execute();",
          "await db.selectFrom('threads').selectAll().where('status', '=', 'open').execute();",
          'await sql`DELETE FROM contacts WHERE erased_at IS NOT NULL`.execute(db);',
          '',
        ].join('\n'),
      },
    ];
    expect([...unscopedStatements(files, tenant)]).toEqual([
      ['src/example.ts threads', 1],
      ['src/example.ts contacts', 1],
    ]);
  });
});
