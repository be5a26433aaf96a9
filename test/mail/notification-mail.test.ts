import { sql } from 'kysely';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { startSmtpServer } from '../../harness/smtp.js';
import { BOSS_SCHEMA } from '../../src/jobs/boss.js';
import { systemMailer } from '../../src/mail/system-mailer.js';
import {
  NOTIFICATION_MAIL_QUEUE,
  NOTIFICATION_MAIL_WINDOW_MS,
  type NotificationMailJob,
} from '../../src/notifications/notification-mail.enqueue.js';
import { notificationMailQueue } from '../../src/notifications/notification-mail.queue.js';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { openSocket } from '../helpers/livechat.js';
import { seedThread, signedInUser } from '../helpers/threads.js';
import { waitFor } from '../helpers/webhooks.js';

/**
 * Notification e-mail (docs/teams.md): a user with no socket open is mailed their assigned,
 * mentioned and SLA notifications through the system mailer, at most once per 5 minutes,
 * each mail carrying everything since the last. The queue's worker is run by hand here, with
 * the service's clock moved past the window instead of waiting for it.
 */
const smtp = await startSmtpServer();
afterAll(() => smtp.close());
const MAIL_ENV = {
  INBOX_SMTP_URL: smtp.url,
  INBOX_MAIL_FROM: 'inbox@acme.test',
  INBOX_ALLOW_PRIVATE_SMTP: 'true',
  INBOX_PUBLIC_URL: 'https://inbox.acme.test/support',
};
const ctx = await useTestContext({ env: MAIL_ENV });
const wsBase = (await ctx.app.listen({ port: 0, host: '127.0.0.1' })).replace('http', 'ws');
const handle = notificationMailQueue.worker!.handle;

beforeEach(() => smtp.reset());

type Headers = Record<string, string>;
async function setup() {
  const tenant = await makeTenant(ctx.deps, { name: 'Acme <Support>' });
  const connection = await makeConnection(ctx.deps, tenant.workspace.id);
  const ada = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id, ['admin']);
  const bo = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
  const thread = () => seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
  return { tenant, ada, bo, thread };
}
const assign = async (threadId: number, headers: Headers, assigneeId: number) => {
  const res = await ctx.app.inject({ method: 'PATCH', url: `/v1/threads/${threadId}`, headers, payload: { assigneeId } });
  expect(res.statusCode, res.body).toBe(200);
};
const mention = async (threadId: number, headers: Headers, userId: number, text: string) => {
  const res = await ctx.app.inject({
    method: 'POST',
    url: `/v1/threads/${threadId}/messages`,
    headers,
    payload: { text, private: true, mentions: [userId] },
  });
  expect(res.statusCode, res.body).toBe(201);
};
const queued = async (userId: number) =>
  (await ctx.deps.db.selectFrom('notification_mail_queue').select('notification_id').where('user_id', '=', userId).execute()).length;
const jobsFor = async (userId: number) =>
  (
    await sql<{ state: string; start_after: Date }>`
      SELECT state, start_after FROM ${sql.table(`${BOSS_SCHEMA}.job`)}
      WHERE name = ${NOTIFICATION_MAIL_QUEUE} AND singleton_key = ${`user:${userId}`} ORDER BY created_on`.execute(ctx.deps.db)
  ).rows;
/**
 * Runs the worker as pg-boss would: takes the jobs that may start (so a user's waiting job is
 * no longer the one their next notification finds), hands them over, completes them; with the
 * service's clock at `at`.
 */
const work = async (at = new Date()) => {
  const jobs = await ctx.deps.boss.fetch<NotificationMailJob>(NOTIFICATION_MAIL_QUEUE, { batchSize: 100 });
  await handle({ ...ctx.deps, now: () => at }, jobs);
  if (jobs.length > 0)
    await ctx.deps.boss.complete(
      NOTIFICATION_MAIL_QUEUE,
      jobs.map((j) => j.id),
    );
};
/** The minutely sweep's job: `{}` as its schedule sends it, or null as one queued by a schedule made without data carries. */
const sweep = async (at = new Date(), data: NotificationMailJob | null = {}) =>
  handle({ ...ctx.deps, now: () => at }, [{ id: 'sweep', data: data as NotificationMailJob }]);
const mailsTo = (email: string) => smtp.mails.filter((m) => m.to.includes(email));
const threadLink = (id: number) => `https://inbox.acme.test/support/app/c/${id}`;

describe('notification e-mail', () => {
  it('mails three notifications made within the window in one mail, with a link to each thread', async () => {
    const { ada, bo, thread } = await setup();
    const [one, two, three] = [await thread(), await thread(), await thread()];
    await assign(one.id, ada.headers, bo.user.id);
    await assign(two.id, ada.headers, bo.user.id);
    await mention(three.id, ada.headers, bo.user.id, '@Bo can you <check> this refund?');
    expect(await queued(bo.user.id)).toBe(3);
    // One waiting job for Bo however many notifications: the queue keeps one per user.
    expect((await jobsFor(bo.user.id)).map((j) => j.state)).toEqual(['created']);

    await work();
    const mails = mailsTo(bo.user.email);
    expect(mails).toHaveLength(1);
    const { mail } = mails[0]!;
    expect(mail.subject).toBe('3 notifications in Acme <Support>');
    for (const t of [one, two, three]) {
      expect(mail.text).toContain(threadLink(t.id));
      expect(mail.html).toContain(`href="${threadLink(t.id)}"`);
    }
    expect(mail.text).toContain(`${ada.user.name} assigned you`);
    expect(mail.text).toContain(`${ada.user.name} mentioned you in`);
    expect(mail.text).toContain('@Bo can you <check> this refund?');
    expect(mail.html).toContain('@Bo can you &#60;check&#62; this refund?');
    expect(await queued(bo.user.id)).toBe(0);
    // Run again (a duplicate job, the sweep): nothing waits, nothing is sent.
    await handle(ctx.deps, [{ id: 'duplicate', data: { userId: bo.user.id } }]);
    await sweep();
    expect(mailsTo(bo.user.email)).toHaveLength(1);
    // Ada assigned, never was assigned: no mail for her.
    expect(mailsTo(ada.user.email)).toEqual([]);
  });

  it('sends the next mail only after the window, carrying only what came since the last', async () => {
    const { ada, bo, thread } = await setup();
    const first = await thread();
    await assign(first.id, ada.headers, bo.user.id);
    const sentAt = new Date();
    await work(sentAt);
    expect(mailsTo(bo.user.email)).toHaveLength(1);
    expect(mailsTo(bo.user.email)[0]!.mail.subject).toMatch(new RegExp(`^${ada.user.name} assigned you the conversation with `));

    const [later, last] = [await thread(), await thread()];
    await assign(later.id, ada.headers, bo.user.id);
    await assign(last.id, ada.headers, bo.user.id);
    // The job waits for the window to open.
    const waiting = (await jobsFor(bo.user.id)).filter((j) => j.state === 'created');
    expect(waiting).toHaveLength(1);
    expect(waiting[0]!.start_after.getTime()).toBeGreaterThanOrEqual(sentAt.getTime() + NOTIFICATION_MAIL_WINDOW_MS - 1000);
    // The sweep before the window ends: nothing is sent and the two keep waiting.
    await sweep(new Date(sentAt.getTime() + NOTIFICATION_MAIL_WINDOW_MS - 1000));
    expect(mailsTo(bo.user.email)).toHaveLength(1);
    expect(await queued(bo.user.id)).toBe(2);

    await sweep(new Date(sentAt.getTime() + NOTIFICATION_MAIL_WINDOW_MS + 1000), null);
    const mails = mailsTo(bo.user.email);
    expect(mails).toHaveLength(2);
    const second = mails[1]!.mail;
    expect(second.subject).toBe('2 notifications in Acme <Support>');
    expect(second.text).toContain(threadLink(later.id));
    expect(second.text).toContain(threadLink(last.id));
    expect(second.text).not.toContain(threadLink(first.id));
  });

  it('credits routing only when routing assigned: an API key’s assignment names no one', async () => {
    const { tenant, bo, thread } = await setup();
    const t = await thread();
    await assign(t.id, tenant.headers, bo.user.id);
    await work();
    const mails = mailsTo(bo.user.email);
    expect(mails).toHaveLength(1);
    expect(mails[0]!.mail.subject).toMatch(/^You were assigned the conversation with /);
    expect(mails[0]!.mail.text).not.toContain('Routing');
  });

  it('mails nothing while the user has a socket open', async () => {
    const { ada, bo, thread } = await setup();
    const socket = await openSocket(`${wsBase}/v1/realtime?token=${bo.headers.authorization!.replace('Bearer ', '')}`);
    await socket.frame((f) => f.type === 'ready', 'ready');
    await waitFor(
      async () => (await ctx.deps.db.selectFrom('user_sockets').select('user_id').where('user_id', '=', bo.user.id).execute()).length > 0,
      'the socket recorded',
    );
    const t = await thread();
    await assign(t.id, ada.headers, bo.user.id);
    await socket.frame((f) => f.type === 'notification.created', 'the notification on the socket');
    expect(await queued(bo.user.id)).toBe(0);
    expect(await jobsFor(bo.user.id)).toEqual([]);
    await sweep();
    expect(mailsTo(bo.user.email)).toEqual([]);
    socket.ws.close();
  });

  it('mails nothing of a type the user turned off, even one queued before', async () => {
    const { tenant, ada, bo, thread } = await setup();
    const off = await ctx.app.inject({
      method: 'PATCH',
      url: '/v1/users/me',
      headers: bo.headers,
      payload: { notify: { email: { assigned: false } } },
    });
    expect(off.statusCode, off.body).toBe(200);
    const [assigned, mentioned] = [await thread(), await thread()];
    await assign(assigned.id, ada.headers, bo.user.id);
    await assign(mentioned.id, tenant.headers, ada.user.id); // Ada's, so contact messages tell her
    expect(await queued(bo.user.id)).toBe(0);
    expect(await jobsFor(bo.user.id)).toEqual([]);
    await mention(mentioned.id, ada.headers, bo.user.id, 'have a look');
    expect(await queued(bo.user.id)).toBe(1);
    // Turned off after it was queued: it is dropped, not mailed.
    await ctx.app.inject({
      method: 'PATCH',
      url: '/v1/users/me',
      headers: bo.headers,
      payload: { notify: { email: { mentioned: false } } },
    });
    await work();
    expect(mailsTo(bo.user.email)).toEqual([]);
    expect(await queued(bo.user.id)).toBe(0);
    // Ada was told of her assignment (an API key did it), not of anything else.
    await work();
    expect(mailsTo(ada.user.email)).toHaveLength(1);
  });

  it('keeps what waits when the server refuses, and tries again once the window has passed', async () => {
    const { ada, bo, thread } = await setup();
    const t = await thread();
    await assign(t.id, ada.headers, bo.user.id);
    smtp.refuse(bo.user.email, 451);
    const at = new Date();
    await work(at);
    expect(mailsTo(bo.user.email)).toEqual([]);
    expect(await queued(bo.user.id)).toBe(1);
    smtp.reset();
    await sweep(new Date(at.getTime() + 1000));
    expect(mailsTo(bo.user.email)).toEqual([]);
    await sweep(new Date(at.getTime() + NOTIFICATION_MAIL_WINDOW_MS + 1000));
    expect(mailsTo(bo.user.email)).toHaveLength(1);
    expect(await queued(bo.user.id)).toBe(0);
  });

  it('is sent by the queue’s own worker', async () => {
    const worker = await startTestContext({ database: ctx.database, env: MAIL_ENV, workers: true });
    try {
      const { ada, bo, thread } = await setup();
      const t = await thread();
      await assign(t.id, ada.headers, bo.user.id);
      await waitFor(async () => mailsTo(bo.user.email).length > 0, 'the mail');
      expect(mailsTo(bo.user.email)[0]!.mail.text).toContain(threadLink(t.id));
      // The mail is taken off the queue in the commit that follows the send.
      await waitFor(async () => (await queued(bo.user.id)) === 0, 'the queue emptied');
    } finally {
      await worker.close();
    }
  });
});

describe('without a system mailer', () => {
  it('queues nothing and answers as ever', async () => {
    const bare = await startTestContext({ database: ctx.database });
    try {
      expect(systemMailer(bare.deps)).toBeUndefined();
      const tenant = await makeTenant(bare.deps);
      const connection = await makeConnection(bare.deps, tenant.workspace.id);
      const ada = await signedInUser(bare.app, bare.deps, tenant.workspace.id, ['admin']);
      const bo = await signedInUser(bare.app, bare.deps, tenant.workspace.id);
      const t = await seedThread(bare.deps, { id: connection.id, workspaceId: tenant.workspace.id });
      const res = await bare.app.inject({
        method: 'PATCH',
        url: `/v1/threads/${t.id}`,
        headers: ada.headers,
        payload: { assigneeId: bo.user.id },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(await bare.deps.db.selectFrom('notifications').select('id').where('user_id', '=', bo.user.id).execute()).toHaveLength(1);
      expect(await queued(bo.user.id)).toBe(0);
      expect(await jobsFor(bo.user.id)).toEqual([]);
    } finally {
      await bare.close();
    }
  });
});

describe("a mention's quote", () => {
  it('is cut at 200 characters without splitting an emoji in two', async () => {
    const { ada, bo, thread } = await setup();
    const mentioned = await thread();
    // The emoji's two UTF-16 halves sit at units 198 and 199: a cut at 199 units would keep one half.
    await mention(mentioned.id, ada.headers, bo.user.id, `${'b'.repeat(198)}😀 and the rest of a long note`);
    await work();
    const { mail } = mailsTo(bo.user.email)[0]!;
    expect(mail.text).toContain(`${'b'.repeat(198)}😀…`);
    expect(mail.text).not.toContain('\uFFFD');
  });
});
