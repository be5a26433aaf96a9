// Phase `--conversations`: the reads of agents working a large inbox. Seeds one workspace with
// --threads threads and --messages messages (conversations.queries.ts), beside a neighbouring
// workspace whose threads all carry the bench workspace's rare label, then measures over HTTP
// against one api process, with a signed-in agent's JWT, p50/p95 of `GET /v1/threads?status=open&
// assigneeId=me` and of `GET /v1/messages/search` for words of several frequencies, each request
// alone (one at a time, so the figure is a request's own latency, not a queue's), and prints the
// EXPLAIN (ANALYZE) of both reads; then, with the threads in teams and restrictAgentsToTeams on,
// the same agent's lists again. Goals: thread page p95 ≤ 20 ms (restricted too), search p95 ≤ 50 ms.
import { randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { createDatabase, type Db } from '../../src/db/database.js';
import { createUser } from '../../src/users/users.service.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { say, serve } from './common.js';
import {
  countMatches,
  explainRestrictedPage,
  explainSearch,
  explainThreadPage,
  seedConversations,
  seedNeighbour,
  seedTeams,
  WORDS,
} from './conversations.queries.js';
import type { BenchOptions } from './options.js';

/** Threads of a second workspace, all labelled `escalated` (the bench workspace's rare label). */
const NEIGHBOUR_THREADS = 20_000;

const percentile = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!;

export interface Timed {
  what: string;
  matches?: number;
  p50Ms: number;
  p95Ms: number;
  maxMs: number;
}

export async function time(what: string, url: string, headers: Record<string, string>, samples: number): Promise<Timed> {
  const once = async () => {
    const started = performance.now();
    const res = await fetch(url, { headers });
    const body = await res.text();
    if (res.status !== 200) throw new Error(`${what}: ${res.status} ${body}`);
    return performance.now() - started;
  };
  for (let i = 0; i < 20; i++) await once(); // warm the connection, the plan cache and the buffers
  const ms: number[] = [];
  for (let i = 0; i < samples; i++) ms.push(await once());
  ms.sort((a, b) => a - b);
  const r = (x: number) => Number(x.toFixed(1));
  return { what, p50Ms: r(percentile(ms, 50)), p95Ms: r(percentile(ms, 95)), maxMs: r(ms[ms.length - 1]!) };
}

export async function measureConversations(options: BenchOptions, databaseUrl: string, db: Db, workspaceId: number, connectionId: number) {
  say(`conversations: seeding ${options.threads} threads and ${options.messages} messages in one workspace`);
  const password = randomBytes(12).toString('hex');
  const agents = [];
  for (let i = 0; i < 10; i++)
    agents.push(
      await createUser(db, workspaceId, {
        name: `Agent ${i}`,
        email: `agent-${i}-${randomBytes(3).toString('hex')}@bench.test`,
        password,
        roles: ['agent'],
      }),
    );
  // Its own pool without the service's statement timeout: a slice of 100,000 messages, each
  // indexed for search, takes longer than any request may.
  const seeding = createDatabase(databaseUrl, { max: 1, statementTimeoutMillis: 0 });
  let seeded: Awaited<ReturnType<typeof seedConversations>>;
  try {
    seeded = await seedConversations(
      seeding.db,
      workspaceId,
      connectionId,
      agents.map((a) => a.id),
      options.threads,
      options.messages,
    );
    await seedNeighbour(seeding.db, (await createWorkspace(db, 'Bench neighbour')).id, NEIGHBOUR_THREADS);
    // Every table, so whatever the migrations keep beside threads (label rows) is as autovacuum
    // would leave it too.
    await sql`VACUUM ANALYZE`.execute(seeding.db);
  } finally {
    await seeding.close();
  }
  say(`conversations: seeded in ${seeded.seconds} s`);

  const api = await serve(options, 'api', databaseUrl);
  try {
    const login = await fetch(`${api.url}/api/user/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: agents[0]!.email, password }),
    });
    const headers = { authorization: `Bearer ${((await login.json()) as { access_token: string }).access_token}` };
    const me = agents[0]!.id;

    const threadPage = await time(
      'threads status=open&assigneeId=me',
      `${api.url}/v1/threads?status=open&assigneeId=me`,
      headers,
      options.samples,
    );
    const others = [
      await time('threads status=open', `${api.url}/v1/threads?status=open`, headers, options.samples),
      await time('threads status=open,pending&label=vip', `${api.url}/v1/threads?status=open,pending&label=vip`, headers, options.samples),
      // A rare label (common in the neighbour), and one no thread carries: neither may cost a
      // walk of every thread.
      await time('threads label=escalated', `${api.url}/v1/threads?label=escalated`, headers, options.samples),
      await time('threads status=open&label=absent', `${api.url}/v1/threads?status=open&label=absent`, headers, options.samples),
      await time('labels', `${api.url}/v1/labels`, headers, options.samples),
      // The console's tab counts, read again after thread events.
      await time('threads/counts status=open', `${api.url}/v1/threads/counts?status=open`, headers, options.samples),
    ];
    // Words by frequency: the most common, a middling one, a rare one; a phrase, an `or`, an exclusion.
    const [common, middling, rare] = [WORDS[0]!, WORDS[100]!, WORDS[3000]!];
    const searches = [common, middling, rare, `"${WORDS[0]} ${WORDS[1]}"`, `${WORDS[150]} or ${WORDS[2500]}`, `${WORDS[100]} -${WORDS[0]}`];
    const searchTimes: Timed[] = [];
    for (const q of searches) {
      const timed = await time(`search ${q}`, `${api.url}/v1/messages/search?q=${encodeURIComponent(q)}`, headers, options.samples);
      searchTimes.push({ ...timed, matches: await countMatches(db, workspaceId, q) });
    }
    const plans = {
      threadPage: await explainThreadPage(db, workspaceId, me),
      searchCommon: await explainSearch(db, workspaceId, common),
      searchMiddling: await explainSearch(db, workspaceId, middling),
      searchRare: await explainSearch(db, workspaceId, rare),
      restrictedPage: '',
    };

    // The same agent once the workspace restricts agents to their teams: the list must stay as fast.
    // Without the service's statement timeout: moving 100,000 threads into teams on a loaded
    // machine takes longer than any request may.
    const teaming = createDatabase(databaseUrl, { max: 1, statementTimeoutMillis: 0 });
    try {
      await seedTeams(
        teaming.db,
        workspaceId,
        agents.map((a) => a.id),
      );
    } finally {
      await teaming.close();
    }
    const restricted = [
      await time('restricted: threads', `${api.url}/v1/threads`, headers, options.samples),
      await time('restricted: threads status=open', `${api.url}/v1/threads?status=open`, headers, options.samples),
      await time(
        'restricted: threads status=open&assigneeId=me',
        `${api.url}/v1/threads?status=open&assigneeId=me`,
        headers,
        options.samples,
      ),
      await time('restricted: threads label=vip', `${api.url}/v1/threads?label=vip`, headers, options.samples),
      await time('restricted: labels', `${api.url}/v1/labels`, headers, options.samples),
      await time('restricted: threads/counts status=open', `${api.url}/v1/threads/counts?status=open`, headers, options.samples),
      await time(`restricted: search ${common}`, `${api.url}/v1/messages/search?q=${common}`, headers, options.samples),
    ];
    plans.restrictedPage = await explainRestrictedPage(db, workspaceId, me);
    return { seeded, threadPage, others, restricted, searches: searchTimes, plans, rssMb: api.peakRssMb() };
  } finally {
    await api.stop();
  }
}
