import { sql } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { writeOutbox } from '../../src/webhooks-out/outbox.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { startReceiver } from '../helpers/receiver.js';
import { seedThread } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

const receiver = await startReceiver();
afterAll(() => receiver.close());
const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' } });

interface LoggedEvent {
  id: string;
  type: string;
  workspaceId: number;
  data: { id?: number; labels?: string[]; marker?: string };
}

async function workspace() {
  const tenant = await makeTenant(ctx.deps);
  const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms' });
  const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
  return { tenant, thread };
}
type Workspace = Awaited<ReturnType<typeof workspace>>;

/** One change, one `thread.updated` event (and the activity line's `message.created`). */
async function label(w: Workspace, name: string) {
  const res = await ctx.app.inject({
    method: 'PATCH',
    url: `/v1/threads/${w.thread.id}`,
    headers: w.tenant.headers,
    payload: { labels: [name] },
  });
  expect(res.statusCode, res.body).toBe(200);
}

async function page(w: Workspace, query: string) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/events?${query}`, headers: w.tenant.headers });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: LoggedEvent[]; meta: { nextCursor?: string } };
}

/** Reads from `after` to the end of the log, `limit` at a time: the events and the cursor to keep. */
async function catchUp(w: Workspace, after: string | undefined, limit = 3) {
  const events: LoggedEvent[] = [];
  let cursor = after;
  for (;;) {
    const next = await page(w, `limit=${limit}${cursor ? `&after=${cursor}` : ''}`);
    events.push(...next.data);
    if (!next.meta.nextCursor) return { events, cursor };
    cursor = next.meta.nextCursor;
  }
}

const labelsOf = (events: LoggedEvent[]) => events.filter((e) => e.type === 'thread.updated').map((e) => e.data.labels?.[0]);

describe('GET /v1/events: the event log', () => {
  it('lets a consumer that stopped catch up with no gap and no repeat, with no endpoint at all', async () => {
    const w = await workspace();
    await label(w, 'one');
    const first = await waitFor(async () => {
      const read = await catchUp(w, undefined);
      return labelsOf(read.events).length === 1 && read;
    }, 'the first event in the log');
    // The consumer stops here, holding its cursor, while the workspace goes on.
    const names = ['two', 'three', 'four', 'five', 'six', 'seven', 'eight'];
    for (const name of names) await label(w, name);
    const other = await workspace();
    await label(other, 'elsewhere');

    const caughtUp = await waitFor(async () => {
      const read = await catchUp(w, first.cursor);
      return labelsOf(read.events).length === names.length && read;
    }, 'the events made while the consumer was away');
    expect(labelsOf(caughtUp.events)).toEqual(names);
    const ids = [...first.events, ...caughtUp.events].map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(caughtUp.events.every((e) => e.workspaceId === w.tenant.workspace.id)).toBe(true);
    // At the end: an empty page without a cursor; the kept cursor still reads nothing new.
    expect(await page(w, `after=${caughtUp.cursor}`)).toMatchObject({ data: [], meta: {} });
  });

  it('replays the very ids and bodies the endpoints were sent, filtered by type, pings left out', async () => {
    const w = await workspace();
    const path = `/log${w.tenant.workspace.id}`;
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: w.tenant.headers,
      payload: { url: `${receiver.url}${path}`, events: ['*'] },
    });
    expect(created.statusCode, created.body).toBe(201);
    const ping = await ctx.app.inject({
      method: 'POST',
      url: `/v1/webhook-endpoints/${created.json().data.id}/test`,
      headers: w.tenant.headers,
    });
    expect(ping.statusCode, ping.body).toBeLessThan(300);
    await label(w, 'sent');
    const received = await waitFor(async () => {
      const bodies = receiver.received.filter((r) => r.path === path).map((r) => JSON.parse(r.raw.toString('utf8')) as LoggedEvent);
      return bodies.filter((b) => b.type !== 'ping').length === 2 && bodies.filter((b) => b.type !== 'ping');
    }, 'the deliveries');
    const log = await waitFor(async () => {
      const read = await catchUp(w, undefined);
      return read.events.length === 2 && read.events;
    }, 'the events in the log');
    expect(log.map((e) => e.id).sort()).toEqual(received.map((e) => e.id).sort());
    for (const event of log) expect(event).toEqual(received.find((r) => r.id === event.id));
    expect((await page(w, 'types=thread.updated')).data.map((e) => e.type)).toEqual(['thread.updated']);
  });

  it('holds back an event committed after an older transaction that is still open, so no consumer skips it', async () => {
    const w = await workspace();
    const workspaceId = w.tenant.workspace.id;
    const event = (marker: string) => ({ type: 'thread.updated' as const, workspaceId, data: { marker } as never });
    let release!: () => void;
    let written!: () => void;
    const wrote = new Promise<void>((resolve) => {
      written = resolve;
    });
    const held = ctx.deps.db.transaction().execute(async (trx) => {
      await writeOutbox(ctx.deps.boss, trx, [event('older')], new Date());
      written();
      await new Promise<void>((resolve) => {
        release = resolve;
      });
    });
    await wrote;
    await ctx.deps.db.transaction().execute((trx) => writeOutbox(ctx.deps.boss, trx, [event('newer')], new Date()));
    // "newer" is committed, but reading it now would move a consumer past "older" for good.
    const meanwhile = await page(w, '');
    expect(meanwhile.data.map((e) => e.data.marker)).toEqual([]);
    release();
    await held;
    const after = await waitFor(async () => {
      const read = await catchUp(w, undefined);
      return read.events.length === 2 && read.events;
    }, 'both events');
    expect(after.map((e) => e.data.marker)).toEqual(['older', 'newer']);
  });

  it('orders by position as numbers, so a page never skips an event when positions gain a digit', async () => {
    const w = await workspace();
    // The next two positions are 10^n - 1 and 10^n: one change's two events straddle the extra digit.
    const { rows } = await sql<{ max: string }>`SELECT coalesce(max(seq), 0)::text AS max FROM webhook_events`.execute(ctx.deps.db);
    const boundary = 10 ** (rows[0]!.max.length + 1);
    await sql`SELECT setval(pg_get_serial_sequence('webhook_events', 'seq'), ${boundary - 2})`.execute(ctx.deps.db);
    await label(w, 'digits');
    const written = await ctx.deps.db
      .selectFrom('webhook_events')
      .select(['type', 'seq'])
      .where('workspace_id', '=', w.tenant.workspace.id)
      .orderBy('seq')
      .execute();
    expect(written.map((e) => [e.type, String(e.seq)])).toEqual([
      ['message.created', String(boundary - 1)],
      ['thread.updated', String(boundary)],
    ]);
    // One event a page: each page's cursor is past exactly the events read so far.
    const read = await waitFor(async () => {
      const all = await catchUp(w, undefined, 1);
      return all.events.length === 2 && all;
    }, 'both events in the log');
    expect(read.events.map((e) => e.type)).toEqual(['message.created', 'thread.updated']);
    expect((await page(w, 'limit=100')).data.map((e) => e.type)).toEqual(['message.created', 'thread.updated']);
  });

  it('is for workspace admins, and refuses a malformed cursor or an unknown type with 422', async () => {
    const w = await workspace();
    const reader = await makeTenant(ctx.deps, { scopes: ['read'] });
    const forbidden = await ctx.app.inject({ method: 'GET', url: '/v1/events', headers: reader.headers });
    expect(forbidden.statusCode).toBe(403);
    const position = (raw: string) => `after=${Buffer.from(raw).toString('base64url')}`;
    // A position past what the columns hold (seq is a bigint: at most 2^63-1) is malformed too.
    const malformed = ['after=not-a-cursor!', position('x:1'), position('1:9223372036854775808'), position('1:9999999999999999999')];
    for (const query of [...malformed, 'types=thread.updated,nope']) {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/events?${query}`, headers: w.tenant.headers });
      expect(res.statusCode, query).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
    }
    // The route as written, `?after=&types=`, with nothing in them: every event from the oldest.
    await label(w, 'asked');
    // Shown once no older transaction runs in the cluster (another test file's may, a moment).
    const all = await waitFor(async () => {
      const res = await ctx.app.inject({ method: 'GET', url: '/v1/events', headers: w.tenant.headers });
      return res.json().data.length > 0 && res;
    }, 'the label change in the log');
    for (const query of ['after=&types=', 'types=', 'types=,']) {
      const res = await ctx.app.inject({ method: 'GET', url: `/v1/events?${query}`, headers: w.tenant.headers });
      expect(res.statusCode, query).toBe(200);
      expect(res.json().data, query).toEqual(all.json().data);
    }
  });
});
