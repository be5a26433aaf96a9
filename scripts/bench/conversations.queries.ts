// The conversations phase's data: one workspace with --threads threads and --messages messages,
// written set-based (generate_series), with text drawn from a word list on a skewed
// distribution so that full-text search meets common, middling and rare words as it would in a
// real inbox. And the EXPLAINs of the two measured reads, written as the service writes them.
import { sql } from 'kysely';
import { newConnectionKey } from '../../src/connections/webhook-secrets.js';
import type { Db } from '../../src/db/database.js';
import { indexUnindexed } from '../../src/threads/search-index.js';
import { visibleThreads } from '../../src/threads/visibility.js';

const BASE = `order delivery refund parcel package shipping address invoice payment card account password
login email phone number price discount coupon return exchange size colour color stock store
help please thanks thank you hello hi good morning evening today tomorrow yesterday week month
where when why how what which who can could would should will not never always still already
my your our their the a an and or but if then because so very really quite just only also
late early damaged broken missing wrong right lost found cancel cancelled change update track
tracking status agent support team manager customer service waiting wait hours days minutes
bonjour merci commande livraison remboursement colis adresse facture paiement hola gracias
pedido entrega reembolso paquete direccion factura pago hallo danke bestellung lieferung
rechnung zahlung paket ciao grazie ordine consegna rimborso pacco indirizzo fattura pagamento`
  .split(/\s+/)
  .filter(Boolean);
const SUFFIXES = [
  '',
  's',
  'ed',
  'ing',
  'er',
  'ly',
  'ion',
  'able',
  'ness',
  'ment',
  'ful',
  'ist',
  'ism',
  'ize',
  'ish',
  'ward',
  'less',
  'ous',
  'ive',
  'al',
  'ic',
  'age',
  'ery',
];

/**
 * 5,000-odd distinct words, most frequent first. A message's words are drawn at index
 * floor(n · r³) for a uniform r: the first word is in about half the messages, the 100th in about
 * one in a hundred, the 3,000th in about one in a thousand.
 */
export const WORDS = [...new Set(SUFFIXES.flatMap((s) => BASE.map((w) => `${w}${s}`)))];

export interface Seeded {
  threads: number;
  messages: number;
  agentIds: number[];
  seconds: number;
}

/**
 * Writes the data in a handful of statements. Threads: 40 % open, 10 % pending, 45 % resolved,
 * 5 % snoozed; four in five assigned among the agents (`me` is agentIds[0]); up to two of ten
 * labels, and `escalated` on one thread in 2,000. Messages spread over the threads and a year, one in fifty a private note.
 */
export async function seedConversations(
  db: Db,
  workspaceId: number,
  connectionId: number,
  agentIds: number[],
  threads: number,
  messages: number,
): Promise<Seeded> {
  const started = performance.now();
  const labels = ['vip', 'billing', 'shipping', 'returns', 'bug', 'feedback', 'urgent', 'b2b', 'lang:fr', 'lang:es'];
  await sql`
    INSERT INTO contacts (workspace_id, name)
    SELECT ${workspaceId}, 'Customer ' || i FROM generate_series(1, ${threads}::int) AS i`.execute(db);
  await sql`
    INSERT INTO threads (workspace_id, connection_id, contact_id, status, snoozed_until, assignee_id, labels, last_message_at, last_message_preview)
    SELECT ${workspaceId}, ${connectionId}, c.id, s.status,
           CASE WHEN s.status = 'snoozed' THEN now() + interval '1 day' END,
           CASE WHEN random() < 0.8 THEN (${agentIds}::int[])[1 + floor(random() * ${agentIds.length}::int)::int] END,
           -- From a hash of the thread's id: random() here was drawn once for every thread.
           (SELECT coalesce(array_agg(DISTINCT (${labels}::text[])[1 + abs(hashint8(c.id * 10 + k)) % 10]), '{}')
            FROM generate_series(1, abs(hashint8(c.id)) % 3) AS k)
             -- A rare label: one thread in 2,000 (the label filter must not walk the inbox for it).
             || CASE WHEN abs(hashint8(c.id * 7)) % 2000 = 0 THEN ARRAY['escalated'] ELSE '{}'::text[] END,
           now() - random() * interval '365 days',
           'preview'
    FROM contacts c
    CROSS JOIN LATERAL (SELECT CASE WHEN r < 0.40 THEN 'open' WHEN r < 0.50 THEN 'pending' WHEN r < 0.95 THEN 'resolved' ELSE 'snoozed' END AS status
                        FROM (SELECT random() + c.id * 0 AS r) rr) s
    WHERE c.workspace_id = ${workspaceId}`.execute(db);
  // In slices of 100,000 so that no one statement holds a million rows' worth of memory.
  const { rows: bounds } = await sql<{
    lo: number;
    hi: number;
  }>`SELECT min(id)::bigint AS lo, max(id)::bigint AS hi FROM threads WHERE workspace_id = ${workspaceId}`.execute(db);
  const lo = Number(bounds[0]!.lo);
  const span = Number(bounds[0]!.hi) - lo + 1;
  for (let done = 0; done < messages; done += 100_000) {
    const n = Math.min(100_000, messages - done);
    await sql`
      INSERT INTO messages (workspace_id, thread_id, connection_id, direction, external_id, text, status, kind, private, created_at, updated_at)
      SELECT ${workspaceId}, ${lo}::bigint + (i::bigint * 7919) % ${span}::bigint, ${connectionId},
             CASE WHEN note THEN 'outbound' WHEN i % 3 = 0 THEN 'outbound' ELSE 'inbound' END,
             CASE WHEN note THEN NULL ELSE 'bench-' || i END,
             (SELECT string_agg((${WORDS}::text[])[1 + floor(${WORDS.length}::int * power(random(), 3))::int], ' ')
              FROM generate_series(1, 6 + (i % 15)) AS w WHERE i IS NOT NULL),
             CASE WHEN note THEN 'sent' WHEN i % 3 = 0 THEN 'delivered' ELSE 'received' END,
             CASE WHEN note THEN 'note' ELSE 'message' END, note, at, at
      FROM (SELECT i, i % 50 = 0 AS note, now() - random() * interval '365 days' AS at
            FROM generate_series(${done + 1}::int, ${done + n}::int) AS i) g`.execute(db);
    // Indexed for search as the worker's indexer would have by now (a year of messages).
    while ((await indexUnindexed(db, 100_000)) > 0);
  }
  // What autovacuum would have done by the time an inbox is this big: statistics, the
  // visibility map, and the GIN index's pending list merged into the index proper.
  await sql`VACUUM ANALYZE contacts`.execute(db);
  await sql`VACUUM ANALYZE threads`.execute(db);
  await sql`VACUUM ANALYZE messages`.execute(db);
  return { threads, messages, agentIds, seconds: Number(((performance.now() - started) / 1000).toFixed(1)) };
}

/**
 * A neighbouring workspace of `threads` threads that all carry `escalated`, the bench
 * workspace's rare label: an index over every workspace's labels finds that label common, so
 * the bench workspace's `label=escalated` shows whether the filter is tenant-blind.
 */
export async function seedNeighbour(db: Db, workspaceId: number, threads: number): Promise<void> {
  await sql`
    WITH cn AS (
      INSERT INTO connections (workspace_id, integration_key, external_account_id, name, managed_by, connection_key)
      VALUES (${workspaceId}, 'whatsapp', 'bench-neighbour', 'Neighbour line', 'operator', ${newConnectionKey()}) RETURNING id
    ),
    c AS (
      INSERT INTO contacts (workspace_id, name)
      SELECT ${workspaceId}, 'Neighbour ' || i FROM generate_series(1, ${threads}::int) AS i RETURNING id
    )
    INSERT INTO threads (workspace_id, connection_id, contact_id, status, labels, last_message_at)
    SELECT ${workspaceId}, cn.id, c.id, 'open', ARRAY['escalated'], now() - random() * interval '365 days' FROM c, cn`.execute(db);
}

/** The plan PostgreSQL runs for one page of the thread list, filtered as the route filters. */
export async function explainThreadPage(db: Db, workspaceId: number, userId: number): Promise<string> {
  const { rows } = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
    SELECT threads.*, connections.integration_key FROM threads
    INNER JOIN connections ON connections.id = threads.connection_id
    WHERE threads.workspace_id = ${workspaceId} AND threads.status = ${'open'} AND threads.assignee_id = ${userId}
    ORDER BY threads.last_message_at DESC, threads.id DESC LIMIT 26`.execute(db);
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}

/**
 * The plans of one page of message search, as a user (notes included) runs it: the bounded walk
 * and the index path (src/threads/search.queries.ts), with the planner's estimate of the
 * matches, which chooses between them.
 */
export async function explainSearch(db: Db, workspaceId: number, q: string): Promise<string> {
  const plan = (rows: { 'QUERY PLAN': string }[]) => rows.map((r) => r['QUERY PLAN']).join('\n');
  const estimate = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN SELECT 1 FROM messages WHERE search_vector @@ websearch_to_tsquery('simple', ${q})`.execute(db);
  const walk = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
    SELECT * FROM (SELECT * FROM messages WHERE workspace_id = ${workspaceId} ORDER BY created_at DESC, id DESC LIMIT 5200) m
    WHERE m.search_vector @@ websearch_to_tsquery('simple', ${q}) AND m.kind <> ${'activity'}
    ORDER BY created_at DESC, id DESC LIMIT 26`.execute(db);
  const index = await sql<{ 'QUERY PLAN': string }>`
    EXPLAIN (ANALYZE, BUFFERS, COSTS OFF)
    WITH hits AS MATERIALIZED (
      SELECT id, created_at FROM messages
      WHERE workspace_id = ${workspaceId} AND search_vector @@ websearch_to_tsquery('simple', ${q}) AND kind <> ${'activity'})
    SELECT id, created_at FROM hits ORDER BY created_at DESC, id DESC LIMIT 26`.execute(db);
  return `estimate: ${plan(estimate.rows)}\nwalk:\n${plan(walk.rows)}\nindex:\n${plan(index.rows)}`;
}

/** How many of the workspace's messages a search matches (to say how common its words are). */
export async function countMatches(db: Db, workspaceId: number, q: string): Promise<number> {
  const { rows } = await sql<{ n: number }>`
    SELECT count(*)::int AS n FROM messages
    WHERE workspace_id = ${workspaceId} AND search_vector @@ websearch_to_tsquery('simple', ${q})`.execute(db);
  return rows[0]!.n;
}

/** Teams of the bench workspace: agent i is in team i % TEAMS; one thread in TEAMS + 1 has none. */
export const TEAMS = 5;

/**
 * Puts the bench workspace's threads into TEAMS teams (by a hash of the thread's id, one in
 * TEAMS + 1 in none), each agent into one team, and turns restrictAgentsToTeams on: from then on
 * the bench's agent reads as a team-restricted agent (docs/teams.md, "Who sees what").
 */
export async function seedTeams(db: Db, workspaceId: number, agentIds: number[]): Promise<void> {
  const { rows: teams } = await sql<{ id: number }>`
    INSERT INTO teams (workspace_id, name)
    SELECT ${workspaceId}, 'Bench team ' || i FROM generate_series(1, ${TEAMS}::int) AS i
    RETURNING id`.execute(db);
  const teamIds = teams.map((t) => t.id);
  await sql`
    INSERT INTO team_members (team_id, user_id)
    SELECT (${teamIds}::int[])[1 + (n - 1) % ${TEAMS}::int], u
    FROM unnest(${agentIds}::int[]) WITH ORDINALITY AS a(u, n)`.execute(db);
  await sql`
    UPDATE threads SET team_id = (${teamIds}::int[])[abs(hashint8(id * 13)) % ${TEAMS + 1}::int]
    WHERE workspace_id = ${workspaceId}`.execute(db);
  await sql`UPDATE workspaces SET settings = settings || '{"restrictAgentsToTeams": true}'::jsonb WHERE id = ${workspaceId}`.execute(db);
  await sql`VACUUM ANALYZE threads`.execute(db);
}

/** The plan of the first page of `GET /v1/threads` as a team-restricted agent reads it (the service's own condition). */
export async function explainRestrictedPage(db: Db, workspaceId: number, userId: number): Promise<string> {
  const reader = { kind: 'user' as const, workspaceId, userId, roles: ['agent'] };
  const query = db
    .selectFrom('threads')
    .innerJoin('connections', 'connections.id', 'threads.connection_id')
    .innerJoin('contacts', 'contacts.id', 'threads.contact_id')
    .selectAll('threads')
    .select(['connections.integration_key', 'contacts.name as contact_name'])
    .where('threads.workspace_id', '=', workspaceId)
    .where(visibleThreads(reader))
    .orderBy('threads.last_message_at', 'desc')
    .orderBy('threads.id', 'desc')
    .limit(26);
  const compiled = query.compile();
  const { rows } = await db.executeQuery<{ 'QUERY PLAN': string }>({
    ...compiled,
    sql: `EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) ${compiled.sql}`,
  });
  return rows.map((r) => r['QUERY PLAN']).join('\n');
}
