import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { METRICS_COLLECT_INTERVAL_MS } from '../../src/health/health.routes.js';
import { startTestContext, useTestContext } from '../helpers/app.js';

const TOKEN = 'metrics-scrape-token-0123456789';
let now = new Date('2030-01-01T00:00:00Z');
const ctx = await useTestContext({ now: () => now, env: { INBOX_METRICS_TOKEN: TOKEN } });

const scrape = (headers: Record<string, string> = { authorization: `Bearer ${TOKEN}` }) =>
  ctx.app.inject({ method: 'GET', url: '/metrics', headers });

describe('/metrics with INBOX_METRICS_TOKEN', () => {
  it('asks for the bearer token: none, another one or another scheme → 401; the token → 200', async () => {
    for (const headers of [
      {},
      { authorization: 'Bearer wrong-token' },
      { authorization: `Basic ${TOKEN}` },
      { 'x-api-key': TOKEN },
    ] as Record<string, string>[]) {
      const res = await scrape(headers);
      expect(res.statusCode, JSON.stringify(headers)).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
      expect(res.body).not.toContain('inbox_');
    }
    const ok = await scrape();
    expect(ok.statusCode).toBe(200);
    expect(ok.body).toContain('# TYPE inbox_queue_jobs gauge');
  });

  it('without the variable, /metrics stays open', async () => {
    const open = await startTestContext({ database: ctx.database });
    try {
      expect((await open.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(200);
    } finally {
      await open.close();
    }
  });
});

describe('the cost of a scrape', () => {
  it('reads Postgres at most once per 15 s, however often it is scraped', async () => {
    const deadLetters = (body: string) => Number(/^inbox_webhook_dead_letters (\d+)$/m.exec(body)?.[1]);
    const before = deadLetters((await scrape()).body);
    await sql`INSERT INTO webhook_inbox (id, integration_key, raw_body, status) VALUES (gen_random_uuid(), 'sms', '{}', 'dead_letter')`.execute(
      ctx.deps.db,
    );
    // Within the interval: the figures of the last read, no new count.
    now = new Date(now.getTime() + METRICS_COLLECT_INTERVAL_MS - 1);
    expect(deadLetters((await scrape()).body)).toBe(before);
    now = new Date(now.getTime() + 1);
    expect(deadLetters((await scrape()).body)).toBe(before + 1);
  });
});
