import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { decodeCursor } from '../../src/http/pagination.js';
import { type SearchPath, type SearchTuning, searchMessages } from '../../src/threads/search.queries.js';
import { indexUnindexed, SearchIndexer } from '../../src/threads/search-index.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedMessage, seedThread, signedInUser } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

// A message is stored without its search vector, which the worker's indexer fills afterwards
// (src/threads/search-index.ts). Search must answer the same before and after: these tests run
// without workers, so nothing indexes a message until a test says so.
const ctx = await useTestContext();
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const reader = { 'x-api-key': (await issueApiKey(db, ws, 'reader', ['read'])).key };
const agent = await signedInUser(ctx.app, ctx.deps, ws);
const line = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };
const thread = await seedThread(ctx.deps, line);

let clock = Date.UTC(2026, 0, 1);
const at = () => {
  clock += 1000;
  return new Date(clock);
};
const vectorOf = async (id: number) =>
  (await sql<{ v: string | null }>`SELECT search_vector::text AS v FROM messages WHERE id = ${id}`.execute(db)).rows[0]!.v;
const indexAll = async () => {
  while ((await indexUnindexed(db, 1000)) > 0);
};
const route = async (q: string, headers: Record<string, string> = agent.headers) => {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/messages/search?q=${encodeURIComponent(q)}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json() as { data: { id: number }[] }).data.map((m) => m.id);
};
/** Every page of a search at one hit a page, and the paths that found them. */
const pages = async (q: string, tuning?: SearchTuning) => {
  const ids: number[] = [];
  const paths = new Set<SearchPath>();
  let cursor: string | undefined;
  do {
    const page = await searchMessages(
      db,
      { kind: 'api_key', workspaceId: ws },
      q,
      { includePrivate: true },
      { limit: 1, cursor: cursor ? decodeCursor(cursor) : undefined },
      tuning,
    );
    ids.push(...page.items.map((m) => m.id));
    paths.add(page.path);
    cursor = page.meta.nextCursor;
  } while (cursor);
  return { ids, paths };
};

describe('search over messages not indexed yet', () => {
  it('finds a message as soon as it is stored, before the indexer ran, and the same after', async () => {
    const stored = await seedMessage(ctx.deps, thread, 'Where is my quokka parcel?', { createdAt: at() });
    expect(await vectorOf(stored.id)).toBeNull();
    expect(await route('quokka')).toEqual([stored.id]);
    expect(await route('"quokka parcel"')).toEqual([stored.id]);
    expect(await route('quokka -parcel')).toEqual([]);

    await indexAll();
    expect(await vectorOf(stored.id)).toContain("'quokka'");
    expect(await route('quokka')).toEqual([stored.id]);
    expect(await route('"quokka parcel"')).toEqual([stored.id]);
  });

  it('keeps private notes from a read key and activity lines from everyone, indexed or not', async () => {
    const message = await seedMessage(ctx.deps, thread, 'wombat delivered', { createdAt: at() });
    const note = await seedMessage(ctx.deps, thread, 'wombat customer is angry', { kind: 'note', createdAt: at() });
    await seedMessage(ctx.deps, thread, 'wombat assigned by the service', { kind: 'activity', createdAt: at() });
    for (const when of ['before', 'after']) {
      expect(await route('wombat'), when).toEqual([note.id, message.id]);
      expect(await route('wombat', reader), when).toEqual([message.id]);
      expect(await route('angry', reader), when).toEqual([]);
      await indexAll();
    }
  });

  it('merges indexed and unindexed hits newest first with one cursor, on the walk and on the index', async () => {
    const older = [];
    for (let i = 0; i < 30; i++) older.push(await seedMessage(ctx.deps, thread, `numbat ${i}`, { createdAt: at() }));
    await indexAll();
    // Statistics that call `numbat` common, so that a short walk is tried first.
    await sql`ANALYZE messages`.execute(db);
    const newer = [];
    for (let i = 0; i < 3; i++) newer.push(await seedMessage(ctx.deps, thread, `numbat new ${i}`, { createdAt: at() }));
    // One older message loses its vector (its text changed): it is between indexed ones in page order.
    await db.updateTable('messages').set({ text: 'numbat edited' }).where('id', '=', older[1]!.id).execute();
    const expected = [...newer, ...older].map((m) => m.id).sort((x, y) => y - x);
    expect(await pages('numbat')).toEqual({ ids: expected, paths: new Set(['index']) });
    // Walking two rows a page: the newest, unindexed, are walked; past the last page the walk
    // finds too few and the index answers. The same pages either way.
    expect(await pages('numbat', { walkRowsPerHit: 1 })).toEqual({ ids: expected, paths: new Set(['walk', 'fallback']) });
  });

  it('forgets a message’s old words the moment its text changes', async () => {
    const message = await seedMessage(ctx.deps, thread, 'platypus secret words', { createdAt: at() });
    await indexAll();
    expect(await route('platypus')).toEqual([message.id]);
    await db.updateTable('messages').set({ text: 'echidna' }).where('id', '=', message.id).execute();
    expect(await vectorOf(message.id)).toBeNull();
    expect(await route('platypus')).toEqual([]);
    expect(await route('echidna')).toEqual([message.id]);
    // A change that leaves the text as it was keeps the vector.
    await indexAll();
    await db.updateTable('messages').set({ text: 'echidna', status: 'read' }).where('id', '=', message.id).execute();
    expect(await vectorOf(message.id)).toContain("'echidna'");
  });
});

describe('SearchIndexer', () => {
  it('indexes what a stopped process left behind when it starts, oldest first in bounded batches', async () => {
    const left = [];
    for (let i = 0; i < 5; i++) left.push(await seedMessage(ctx.deps, thread, `bilby ${i}`, { createdAt: at() }));
    const indexer = new SearchIndexer(ctx.deps, { batch: 2, idleMs: 1, maxDeferMs: 60_000, sweepMs: 60_000 });
    indexer.start();
    try {
      await waitFor(
        async () =>
          (await sql<{ n: number }>`SELECT count(*)::int AS n FROM messages WHERE search_vector IS NULL`.execute(db)).rows[0]!.n === 0,
        'every message indexed',
      );
    } finally {
      await indexer.stop();
    }
    for (const m of left) expect(await vectorOf(m.id)).toContain("'bilby'");
    expect(await route('bilby')).toEqual(left.map((m) => m.id).reverse());
  });

  it('waits while a batch of deliveries is in flight, and indexes once it ends', async () => {
    const stored = await seedMessage(ctx.deps, thread, 'dingo while processing', { createdAt: at() });
    const indexer = new SearchIndexer(ctx.deps, { batch: 100, idleMs: 1, maxDeferMs: 60_000, sweepMs: 60_000 });
    indexer.begin();
    indexer.start();
    try {
      await waitFor(async () => indexer.deferrals >= 2, 'two passes that gave way to the batch');
      expect(await vectorOf(stored.id)).toBeNull();
      expect(await route('dingo')).toEqual([stored.id]);
      indexer.end();
      await waitFor(async () => (await vectorOf(stored.id)) !== null, 'the message indexed after the batch');
    } finally {
      await indexer.stop();
    }
  });
});
