import { describe, expect, it } from 'vitest';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedThread, signedInUser } from '../helpers/threads.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const reader = { 'x-api-key': (await issueApiKey(ctx.deps.db, ws, 'reader', ['read'])).key };
const ada = await signedInUser(ctx.app, ctx.deps, ws);
const bo = await signedInUser(ctx.app, ctx.deps, ws);
const line = { ...(await makeConnection(ctx.deps, ws)), workspaceId: ws };
const chat = { ...(await makeConnection(ctx.deps, ws, { integrationKey: 'aggregator' })), workspaceId: ws };

const other = await makeTenant(ctx.deps);
const otherUser = await signedInUser(ctx.app, ctx.deps, other.workspace.id);
const otherLine = { ...(await makeConnection(ctx.deps, other.workspace.id)), workspaceId: other.workspace.id };

// Every thread a second apart, so the expected order is the order of creation reversed.
let clock = Date.UTC(2026, 0, 1);
const at = () => {
  clock += 1000;
  return new Date(clock);
};
const t = {
  adaOpen: await seedThread(ctx.deps, line, { status: 'open', assigneeId: ada.user.id, labels: ['vip', 'billing'], lastMessageAt: at() }),
  adaOpen2: await seedThread(ctx.deps, chat, { status: 'open', assigneeId: ada.user.id, lastMessageAt: at() }),
  adaPending: await seedThread(ctx.deps, line, { status: 'pending', assigneeId: ada.user.id, labels: ['vip'], lastMessageAt: at() }),
  boOpen: await seedThread(ctx.deps, line, { status: 'open', assigneeId: bo.user.id, labels: ['billing'], lastMessageAt: at() }),
  unassignedOpen: await seedThread(ctx.deps, chat, { status: 'open', labels: ['vip'], lastMessageAt: at() }),
  unassignedResolved: await seedThread(ctx.deps, line, { status: 'resolved', lastMessageAt: at() }),
  snoozed: await seedThread(ctx.deps, chat, { status: 'snoozed', assigneeId: bo.user.id, lastMessageAt: at() }),
};
// Another workspace's threads: assigned to its own user, with the same label.
const foreign = await seedThread(ctx.deps, otherLine, {
  status: 'open',
  assigneeId: otherUser.user.id,
  labels: ['vip'],
  lastMessageAt: at(),
});

type Name = keyof typeof t;
const newestFirst = (...names: Name[]) => names.map((n) => t[n].id).sort((a, b) => b - a);

async function list(query: string, headers: Record<string, string> = tenant.headers) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads?${query}`, headers });
  expect(res.statusCode, res.body).toBe(200);
  return (res.json().data as { id: number }[]).map((x) => x.id);
}

async function refused(query: string, headers: Record<string, string> = tenant.headers) {
  const res = await ctx.app.inject({ method: 'GET', url: `/v1/threads?${query}`, headers });
  expect(res.statusCode, query).toBe(422);
  expect(res.json().error.code).toBe('validation_failed');
  expect(res.json().meta.requestId).toEqual(expect.any(String));
  return res.json().error.message as string;
}

describe('GET /v1/threads filters', () => {
  it('lists every status by default, and each status alone', async () => {
    expect(await list('')).toEqual(newestFirst(...(Object.keys(t) as Name[])));
    expect(await list('status=open')).toEqual(newestFirst('adaOpen', 'adaOpen2', 'boOpen', 'unassignedOpen'));
    expect(await list('status=pending')).toEqual(newestFirst('adaPending'));
    expect(await list('status=resolved')).toEqual(newestFirst('unassignedResolved'));
    expect(await list('status=snoozed')).toEqual(newestFirst('snoozed'));
  });

  it('takes a comma list of statuses', async () => {
    expect(await list('status=pending,snoozed')).toEqual(newestFirst('adaPending', 'snoozed'));
    expect(await list('status=open,open, resolved')).toEqual(
      newestFirst('adaOpen', 'adaOpen2', 'boOpen', 'unassignedOpen', 'unassignedResolved'),
    );
  });

  it('filters by assignee: an id, me (the signed-in user) and none', async () => {
    expect(await list(`assigneeId=${bo.user.id}`)).toEqual(newestFirst('boOpen', 'snoozed'));
    expect(await list('assigneeId=me', ada.headers)).toEqual(newestFirst('adaOpen', 'adaOpen2', 'adaPending'));
    expect(await list('assigneeId=me', bo.headers)).toEqual(newestFirst('boOpen', 'snoozed'));
    expect(await list('assigneeId=none')).toEqual(newestFirst('unassignedOpen', 'unassignedResolved'));
  });

  it('filters by connection, contact and label (label matched lower-cased)', async () => {
    expect(await list(`connectionId=${chat.id}`)).toEqual(newestFirst('adaOpen2', 'unassignedOpen', 'snoozed'));
    expect(await list(`contactId=${t.boOpen.contact_id}`)).toEqual(newestFirst('boOpen'));
    expect(await list('label=vip')).toEqual(newestFirst('adaOpen', 'adaPending', 'unassignedOpen'));
    expect(await list('label=VIP')).toEqual(newestFirst('adaOpen', 'adaPending', 'unassignedOpen'));
    expect(await list('label=nothing-here')).toEqual([]);
  });

  it('combines filters (all must hold)', async () => {
    expect(await list('status=open&assigneeId=me', ada.headers)).toEqual(newestFirst('adaOpen', 'adaOpen2'));
    expect(await list('status=open,pending&assigneeId=me&label=vip', ada.headers)).toEqual(newestFirst('adaOpen', 'adaPending'));
    expect(await list(`status=open&connectionId=${line.id}&label=billing`)).toEqual(newestFirst('adaOpen', 'boOpen'));
    expect(await list(`assigneeId=none&connectionId=${chat.id}&status=open`)).toEqual(newestFirst('unassignedOpen'));
    expect(await list(`contactId=${t.adaOpen.contact_id}&status=resolved`)).toEqual([]);
  });

  it('pages a filtered list with the cursor, every match once', async () => {
    const seen: number[] = [];
    let cursor: string | undefined;
    do {
      const res = await ctx.app.inject({
        method: 'GET',
        url: `/v1/threads?status=open&limit=1${cursor ? `&cursor=${cursor}` : ''}`,
        headers: tenant.headers,
      });
      seen.push(...res.json().data.map((x: { id: number }) => x.id));
      cursor = res.json().meta.nextCursor;
    } while (cursor);
    expect(seen).toEqual(newestFirst('adaOpen', 'adaOpen2', 'boOpen', 'unassignedOpen'));
  });

  it('never returns another workspace’s threads, whatever the filter names', async () => {
    expect(await list(`assigneeId=${otherUser.user.id}`)).toEqual([]);
    expect(await list(`connectionId=${otherLine.id}`)).toEqual([]);
    expect(await list(`contactId=${foreign.contact_id}`)).toEqual([]);
    expect(await list('label=vip')).not.toContain(foreign.id);
    expect(await list('', other.headers)).toEqual([foreign.id]);
    expect(await list(`connectionId=${line.id}`, other.headers)).toEqual([]);
  });

  it('refuses bad values with 422 naming the field', async () => {
    expect(await refused('status=closed')).toMatch(/^status: .*"closed"/);
    expect(await refused('status=open,')).toMatch(/^status:/);
    expect(await refused('status=')).toMatch(/^status:/);
    for (const v of ['abc', '0', '-1', '1.5', '2147483648', '', '1e3']) expect(await refused(`assigneeId=${v}`)).toMatch(/^assigneeId:/);
    for (const v of ['x', '0', '9007199254740993']) {
      expect(await refused(`connectionId=${v}`)).toMatch(/^connectionId:/);
      expect(await refused(`contactId=${v}`)).toMatch(/^contactId:/);
    }
    for (const v of ['', 'has%20space', 'a'.repeat(51), 'emoji%F0%9F%98%80', 'semi;colon'])
      expect(await refused(`label=${v}`)).toMatch(/^label:/);
  });

  it('refuses assigneeId=me from an API key, which has no user (422)', async () => {
    expect(await refused('assigneeId=me')).toMatch(/API key/);
    expect(await refused('assigneeId=me', reader)).toMatch(/API key/);
    expect(await list(`assigneeId=${ada.user.id}`, reader)).toEqual(newestFirst('adaOpen', 'adaOpen2', 'adaPending'));
  });
});
