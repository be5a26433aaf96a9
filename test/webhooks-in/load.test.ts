import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { useTestContext } from '../helpers/app.js';
import { fixture, sign } from '../helpers/webhooks.js';

const SECRET = 'load-test-secret';
const ctx = await useTestContext({ env: { INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: SECRET } }) } });

describe('ingestion under concurrency', () => {
  it('loses no acknowledged delivery: every 200 has its row, every row in exactly one job, and a group commit queues one job for its deliveries', async () => {
    const base = await ctx.app.listen({ port: 0, host: '127.0.0.1' });
    const template = JSON.parse(fixture('whatsapp', 'text-message.json'));
    const TOTAL = 400;
    const CONCURRENCY = 64;
    const statuses: number[] = [];
    const sent: string[] = [];
    let next = 0;
    // A bounded number of requests from a bounded number of concurrent senders.
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < TOTAL) {
          const n = next++;
          template.entry[0].changes[0].value.messages[0].id = `wamid.load-${n}`;
          const body = JSON.stringify(template);
          sent.push(body);
          const res = await fetch(`${base}/webhooks/whatsapp`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${sign(SECRET, body)}` },
            body,
          });
          statuses.push(res.status);
          await res.arrayBuffer();
        }
      }),
    );
    const acknowledged = statuses.filter((s) => s === 200).length;
    expect(acknowledged).toBe(TOTAL);

    const rows = await ctx.deps.db.selectFrom('webhook_inbox').select(['id', 'raw_body']).execute();
    expect(rows).toHaveLength(acknowledged);
    expect(new Set(rows.map((r) => r.raw_body))).toEqual(new Set(sent));
    const { rows: jobs } = await sql<{ id: string; n: number }>`
      SELECT d.id, count(*)::int AS n FROM pgboss.job, jsonb_array_elements_text(data->'ids') AS d(id) WHERE name = ${WEBHOOK_QUEUE} GROUP BY 1`.execute(
      ctx.deps.db,
    );
    expect(jobs).toHaveLength(rows.length);
    expect(jobs.every((j) => j.n === 1)).toBe(true);
    expect(new Set(jobs.map((j) => j.id))).toEqual(new Set(rows.map((r) => r.id)));
    // 64 senders at once: deliveries that waited for a commit went together, in one job.
    const { rows: count } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM pgboss.job WHERE name = ${WEBHOOK_QUEUE}`.execute(
      ctx.deps.db,
    );
    expect(count[0]!.n).toBeLessThan(rows.length);
  });
});
