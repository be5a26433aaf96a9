import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { findOutboundByExternalId } from '../../src/messaging/messaging.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeOutboundMessage, makeTenant } from '../helpers/factories.js';

const ctx = await useTestContext();

describe('outbound lookup by provider id', () => {
  it('finds outbound messages only, through the outbound-only index', async () => {
    const tenant = await makeTenant(ctx.deps);
    const sms = await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms' });
    const sent = await makeOutboundMessage(ctx.deps, sms, 'SM-shared-id');
    // An inbound message is never a sent message, whatever its provider id.
    await ctx.deps.db
      .insertInto('messages')
      .values({
        workspace_id: sent.workspace_id,
        thread_id: sent.thread_id,
        connection_id: sms.id,
        direction: 'inbound',
        external_id: 'SM-other',
        text: 'hi',
        status: 'received',
      })
      .execute();

    const found = await findOutboundByExternalId(ctx.deps.db, 'sms', ['SM-shared-id', 'SM-other']);
    expect(found).toEqual([
      { external_id: 'SM-shared-id', connection_id: sms.id, app_id: tenant.workspace.appId, external_account_id: sms.externalAccountId },
    ]);

    // Inbound messages are nearly all of the table; the index that serves this lookup holds
    // outbound ones only, so ingestion does not pay an index entry per inbound message.
    const plan = await ctx.deps.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL enable_seqscan = off`.execute(trx);
      const { rows } = await sql<{ 'QUERY PLAN': string }>`
        EXPLAIN SELECT id FROM messages WHERE external_id = ANY(${['SM-shared-id']}::text[]) AND direction = 'outbound'`.execute(trx);
      return rows.map((r) => r['QUERY PLAN']).join('\n');
    });
    expect(plan).toContain('messages_outbound_external_idx');
    const { rows: indexes } = await sql<{ indexdef: string }>`
      SELECT indexdef FROM pg_indexes WHERE tablename = 'messages' AND indexdef LIKE '%(external_id)%'`.execute(ctx.deps.db);
    expect(indexes.map((i) => i.indexdef)).toEqual([expect.stringContaining(`WHERE (direction = 'outbound'::text)`)]);
  });
});
