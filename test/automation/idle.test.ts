import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { goneIdleQuery } from '../../src/automation/automation-rules.queries.js';
import { checkIdleThreads } from '../../src/automation/idle.queue.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedThread } from '../helpers/threads.js';

// The service's clock is injected: the test moves it instead of waiting. (API keys call: a
// JWT signed at the test's clock would be judged by the real one.)
let now = new Date('2026-03-06T10:00:00Z');
const ctx = await useTestContext({ now: () => now });
const db = ctx.deps.db;
const MINUTE = 60_000;
const at = (minutes: number) => new Date(Date.parse('2026-03-06T10:00:00Z') + minutes * MINUTE);

const call = (method: 'GET' | 'POST', url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
const statusOf = async (id: number) =>
  (await db.selectFrom('threads').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status;

describe('thread.idle', () => {
  it('auto-resolves a pending thread once per idle stretch, and leaves others alone', async () => {
    now = at(0);
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+15550100' });
    const created = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Auto-resolve',
      event: 'thread.idle',
      idleMinutes: 48 * 60,
      statuses: ['pending'],
      actions: [{ type: 'set_status', status: 'resolved' }],
    });
    expect(created.statusCode, created.body).toBe(201);
    const conn = { id: connection.id, workspaceId: tenant.workspace.id };
    const pending = await seedThread(ctx.deps, conn, { status: 'pending', lastMessageAt: at(-10) });
    const open = await seedThread(ctx.deps, conn, { status: 'open', lastMessageAt: at(-10) });
    const recent = await seedThread(ctx.deps, conn, { status: 'pending', lastMessageAt: at(60) });

    now = at(48 * 60 - 11); // not yet 48 h
    expect(await checkIdleThreads(ctx.deps)).toBe(0);
    now = at(48 * 60 - 10);
    expect(await checkIdleThreads(ctx.deps)).toBe(1);
    expect(await statusOf(pending.id)).toBe('resolved');
    expect(await statusOf(open.id)).toBe('open');
    expect(await statusOf(recent.id)).toBe('pending');
    const lines = await db
      .selectFrom('messages')
      .select('text')
      .where('thread_id', '=', pending.id)
      .where('kind', '=', 'activity')
      .execute();
    expect(lines.map((l) => l.text)).toEqual(['Automation “Auto-resolve” resolved the conversation']);
    // The same stretch fires once.
    now = at(48 * 60 + 30);
    expect(await checkIdleThreads(ctx.deps)).toBe(0);

    // A new message starts a new stretch: pending again, it fires again 48 h later.
    await db
      .updateTable('threads')
      .set({ status: 'pending', last_message_at: at(48 * 60 + 40) })
      .where('id', '=', pending.id)
      .execute();
    now = at(96 * 60 + 39);
    expect(await checkIdleThreads(ctx.deps)).toBe(1); // `recent`, 48 h after its own last message
    expect(await statusOf(pending.id)).toBe('pending');
    now = at(96 * 60 + 40);
    expect(await checkIdleThreads(ctx.deps)).toBe(1);
    expect(await statusOf(pending.id)).toBe('resolved');
    const rule = (await call('GET', '/v1/automation-rules', tenant.headers)).json().data[0];
    expect(rule).toMatchObject({ runs: 3, lastError: null });
  });

  it('does not fire again for the stretch its own reply started: the loop ends', async () => {
    now = at(0);
    const tenant = await makeTenant(ctx.deps);
    const connection = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms', externalAccountId: '+15550101' });
    const created = await call('POST', '/v1/automation-rules', tenant.headers, {
      name: 'Nudge',
      event: 'thread.idle',
      idleMinutes: 30,
      statuses: ['open'],
      actions: [{ type: 'reply', text: 'Are you still there?' }],
    });
    expect(created.statusCode, created.body).toBe(201);
    const thread = await seedThread(
      ctx.deps,
      { id: connection.id, workspaceId: tenant.workspace.id },
      { status: 'open', lastMessageAt: at(1) },
    );
    now = at(31);
    expect(await checkIdleThreads(ctx.deps)).toBe(1);
    // The reply is the thread's last message now; 30 minutes after it, nobody has written
    // since the rule did: it does not ask the silent contact again, and again.
    for (const minutes of [62, 95, 130]) {
      now = at(minutes);
      expect(await checkIdleThreads(ctx.deps)).toBe(0);
    }
    const replies = await db
      .selectFrom('messages')
      .select(['text', 'automation'])
      .where('thread_id', '=', thread.id)
      .where('direction', '=', 'outbound')
      .where('kind', '=', 'message')
      .execute();
    expect(replies).toEqual([{ text: 'Are you still there?', automation: true }]);
    // The contact writes and the service answers at once (an away reply): the contact's
    // silence after it is new, and fires once more, 30 minutes after the answer.
    const written = (text: string, direction: 'inbound' | 'outbound', automation: boolean, when: Date) => ({
      workspace_id: tenant.workspace.id,
      thread_id: thread.id,
      connection_id: connection.id,
      direction,
      text,
      status: direction === 'inbound' ? ('received' as const) : ('queued' as const),
      automation,
      created_at: when,
      updated_at: when,
    });
    const answered = new Date(at(131).getTime() + 2000);
    await db
      .insertInto('messages')
      .values([written('hello?', 'inbound', false, at(131)), written('We are away.', 'outbound', true, answered)])
      .execute();
    await db.updateTable('threads').set({ last_message_at: answered }).where('id', '=', thread.id).execute();
    now = at(162);
    expect(await checkIdleThreads(ctx.deps)).toBe(1);
  });

  it('reads only the threads that went idle since the last check, by the workspace index', async () => {
    // The table is small here: the planner is told seq scans cost too much, as they would
    // with many threads, and must find the range in threads_workspace_idx.
    const plan = await db.transaction().execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      const rows = await goneIdleQuery(trx, 1, { at: at(-2880), id: 5 }, at(-1440), 200).explain();
      return rows.map((r) => String(r['QUERY PLAN'])).join('\n');
    });
    expect(plan).toMatch(/Index (Only )?Scan (Backward )?using threads_workspace_idx/);
    expect(plan).not.toMatch(/Seq Scan/);
  });
});
