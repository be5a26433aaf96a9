import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { createDatabase } from '../../src/db/database.js';
import { HTTP_TIMEOUTS } from '../../src/http/server.js';
import { WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { InboxWriter } from '../../src/webhooks-in/inbox-writer.js';
import { useTestContext } from '../helpers/app.js';
import { deliverSigned, fixture, waitFor } from '../helpers/webhooks.js';

const SECRET = 'overload-secret-0123';
const CAP = 8;
const STATEMENT_MS = 600;
const CONNECT_MS = 400;
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  logLines,
  env: { INBOX_INGEST_MAX_PENDING: String(CAP), INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET } }) },
  databaseOptions: { connectionTimeoutMillis: CONNECT_MS, statementTimeoutMillis: STATEMENT_MS, queryTimeoutMillis: 5_000 },
});
// The app with a writer the test can watch.
const writer = new InboxWriter(ctx.deps);
const app = await buildApp(ctx.deps, { inboxWriter: writer });
await app.ready();
afterAll(() => app.close());

const template = JSON.parse(fixture('whatsapp', 'text-message.json'));
function delivery(id: string): string {
  template.entry[0].changes[0].value.messages[0].id = id;
  return JSON.stringify(template);
}
const post = (body: string) => deliverSigned({ app, deps: ctx.deps }, 'whatsapp', body);

interface Answer {
  body: string;
  status: number;
  code?: string;
  retryAfter?: string;
  ms: number;
}

describe('a stalled database', () => {
  it('refuses deliveries over INBOX_INGEST_MAX_PENDING at once, times the rest out with 503, and answers 200 only with row and job committed', async () => {
    const locker = new pg.Client({ connectionString: ctx.database.url });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE webhook_inbox IN ACCESS EXCLUSIVE MODE');
    let locked = true;
    try {
      const N = 30;
      const answers: Answer[] = [];
      const started = Date.now();
      const requests = Array.from({ length: N }, async (_, i) => {
        const body = delivery(`wamid.overload-${i}`);
        const res = await post(body);
        answers.push({
          body,
          status: res.statusCode,
          code: res.statusCode === 200 ? undefined : res.json().error.code,
          retryAfter: res.headers['retry-after'] as string | undefined,
          ms: Date.now() - started,
        });
      });

      // Those over the cap are refused while the table is still locked and every held delivery
      // still waits: the refusals come first, not after a timeout (no clock is read for that).
      await waitFor(async () => answers.length >= N - CAP, 'the deliveries over the cap to be refused');
      const refused = [...answers];
      expect(refused).toHaveLength(N - CAP);
      for (const a of refused) expect(a).toMatchObject({ status: 503, code: 'unavailable', retryAfter: '1' });
      expect(writer.held).toBe(CAP);

      // The ones being committed wait on the lock until statement_timeout cancels them: 503.
      await waitFor(async () => answers.length > N - CAP, 'a held delivery to time out on the locked table');
      await locker.query('ROLLBACK');
      locked = false;
      await Promise.all(requests); // every request ends

      expect(answers).toHaveLength(N);
      for (const a of answers) {
        expect([200, 503]).toContain(a.status);
        if (a.status === 503) expect(a).toMatchObject({ code: 'unavailable', retryAfter: '1' });
      }
      const timedOut = answers.slice(N - CAP).filter((a) => a.status === 503);
      expect(timedOut.length).toBeGreaterThan(0);
      expect(timedOut.every((a) => a.ms >= STATEMENT_MS)).toBe(true);
      const ok = answers.filter((a) => a.status === 200);
      expect(ok.length).toBeGreaterThan(0); // deliveries held when the lock went away were stored
      expect(writer.peakHeld).toBeLessThanOrEqual(CAP);
      expect(writer.held).toBe(0);

      // Every 200 has its row and its job; no 503 left a row.
      const rows = await ctx.deps.db.selectFrom('webhook_inbox').select(['id', 'raw_body']).execute();
      const { rows: jobs } = await sql<{
        id: string;
      }>`SELECT jsonb_array_elements_text(data->'ids') AS id FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE}`.execute(ctx.deps.db);
      const stored = new Map(rows.map((r) => [r.raw_body, r.id]));
      const queued = new Set(jobs.map((j) => j.id));
      for (const a of ok) {
        expect(stored.has(a.body)).toBe(true);
        expect(queued.has(stored.get(a.body)!)).toBe(true);
      }
      for (const a of answers.filter((x) => x.status === 503)) expect(stored.has(a.body)).toBe(false);
      expect(rows).toHaveLength(ok.length);

      // A refusal over the cap is chosen, not a failure: no error line per request (an overload
      // is thousands a second), one line when the refusing began and one when it ended.
      const failedLines = logLines.filter((l) => l.msg === 'request failed');
      expect(failedLines).toHaveLength(timedOut.length); // the timed-out ones are failures
      const began = logLines.filter((l) => typeof l.msg === 'string' && l.msg.startsWith('ingestion is full'));
      expect(began).toEqual([expect.objectContaining({ level: 40, held: CAP, max: CAP })]);
      const ended = logLines.filter((l) => l.msg === 'ingestion accepts deliveries again');
      expect(ended).toEqual([expect.objectContaining({ level: 40, refused: N - CAP })]);
    } finally {
      if (locked) await locker.query('ROLLBACK').catch(() => {});
      await locker.end();
    }
  });

  it('answers 503 (not 500) when the pool gives no connection in time, and /readyz says unavailable', async () => {
    const held = await Promise.all(Array.from({ length: 5 }, () => ctx.deps.pool.connect()));
    try {
      const body = delivery('wamid.pool-exhausted');
      const res = await post(body);
      expect(res.statusCode).toBe(503);
      expect(res.json().error.code).toBe('unavailable');
      expect(res.headers['retry-after']).toBe('1');
      const ready = await app.inject({ method: 'GET', url: '/readyz' });
      expect(ready.statusCode).toBe(503);
    } finally {
      for (const c of held) c.release();
    }
    expect((await post(delivery('wamid.pool-back'))).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });
});

describe('bounds by default', () => {
  it('pools wait 5 s for a connection and stop a statement after 15 s; Fastify bounds slow clients', async () => {
    const database = createDatabase(ctx.database.url, { max: 1 });
    try {
      const { rows } = await database.pool.query<{ statement_timeout: string }>('SHOW statement_timeout');
      expect(rows[0]!.statement_timeout).toBe('15s');
      expect(database.pool.options.connectionTimeoutMillis).toBe(5_000);
    } finally {
      await database.close();
    }
    expect(app.server.requestTimeout).toBe(HTTP_TIMEOUTS.requestTimeoutMs);
    expect(app.server.timeout).toBe(HTTP_TIMEOUTS.connectionTimeoutMs);
    expect(HTTP_TIMEOUTS.requestTimeoutMs).toBeGreaterThan(0);
  });
});
