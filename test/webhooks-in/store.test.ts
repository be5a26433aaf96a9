import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { deliveriesJobStatement, WEBHOOK_QUEUE } from '../../src/webhooks-in/inbox.enqueue.js';
import { type NewInboxRow, storeDeliveries } from '../../src/webhooks-in/inbox.queries.js';
import { useTestContext } from '../helpers/app.js';

const ctx = await useTestContext();

const row = (body: string, id: string = randomUUID()): NewInboxRow => ({
  id,
  integrationKey: 'whatsapp',
  event: null,
  rawBody: body,
  verification: 'signed',
});

/** The ids each queued job of the webhook queue carries, jobs in the order written. */
async function queuedIds(ids: string[]): Promise<string[][]> {
  const { rows } = await sql<{ ids: string[] }>`
    SELECT ARRAY(SELECT jsonb_array_elements_text(data->'ids')) AS ids FROM pgboss.job
    WHERE name = ${WEBHOOK_QUEUE} AND data->'ids' ?| ${ids}::text[] ORDER BY created_on`.execute(ctx.deps.db);
  return rows.map((r) => r.ids);
}

const stored = async (ids: string[]) =>
  (await ctx.deps.db.selectFrom('webhook_inbox').select('id').where('id', 'in', ids).execute()).map((r) => r.id).sort();

describe('storing a batch of deliveries and its job in one statement', () => {
  it('writes every row and one job naming exactly them', async () => {
    const rows = [row('{"store":1}'), row('{"store":2}'), row('{"store":3}')];
    const ids = rows.map((r) => r.id);
    const job = await deliveriesJobStatement(ctx.deps.boss, rows);
    await storeDeliveries(ctx.deps.pool, rows, job);
    expect(await stored(ids)).toEqual([...ids].sort());
    expect(await queuedIds(ids)).toEqual([ids]);
  });

  it('writes neither rows nor job when one row cannot be stored', async () => {
    const first = row('{"store":"first"}');
    await storeDeliveries(ctx.deps.pool, [first], await deliveriesJobStatement(ctx.deps.boss, [first]));
    // The second batch repeats the first's id: its INSERT fails, so its other row and its job must not stay.
    const batch = [row('{"store":"fresh"}'), row('{"store":"again"}', first.id)];
    await expect(storeDeliveries(ctx.deps.pool, batch, await deliveriesJobStatement(ctx.deps.boss, batch))).rejects.toMatchObject({
      code: '23505',
    });
    expect(await stored([batch[0]!.id])).toEqual([]);
    expect(await queuedIds([batch[0]!.id])).toEqual([]);
    expect(await queuedIds([first.id])).toEqual([[first.id]]);
  });

  it("stores each row's body exactly, multi-byte characters and empty bodies among them", async () => {
    // Bodies travel as their UTF-8 back to back and are cut by byte offsets: a wrong offset
    // shows as a body that starts or ends in its neighbour.
    const bodies = ['{"text":"café ✓"}', '', '{"text":"😀 two code units"}', 'a=%C3%A9&b=\\"quoted\\"', '{"n":"\uFFFD"}'];
    const rows = bodies.map((b) => row(b));
    await storeDeliveries(ctx.deps.pool, rows, await deliveriesJobStatement(ctx.deps.boss, rows));
    const found = await ctx.deps.db
      .selectFrom('webhook_inbox')
      .select(['id', 'raw_body'])
      .where(
        'id',
        'in',
        rows.map((r) => r.id),
      )
      .execute();
    expect(new Map(found.map((r) => [r.id, r.raw_body]))).toEqual(new Map(rows.map((r) => [r.id, r.rawBody])));
  });

  it('joins a job statement that is not a WITH as well as one that is', async () => {
    const rows = [row('{"store":"plain"}')];
    // pg-boss writes a plain INSERT for a queue without NOTIFY; any statement numbered from $1 stands in for it.
    await storeDeliveries(ctx.deps.pool, rows, { text: 'SELECT $1::int AS n', values: [1] });
    expect(await stored([rows[0]!.id])).toEqual([rows[0]!.id]);
  });
});
