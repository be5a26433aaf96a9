import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as connectionWebhooks from '../../migrations/0041_connection_webhooks.js';
import * as connectionHealth from '../../migrations/0042_connection_health.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

// This file's own clone of the migrated database: taking 0042 and 0041 down and up again touches no other.
const ctx = await useTestContext();
const db = ctx.deps.db;

describe('migration 0041_connection_webhooks', () => {
  it('gives every existing connection a key of its own, and each Meta connection a verify token', async () => {
    const tenant = await makeTenant(ctx.deps);
    const made = [
      await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'whatsapp' }),
      await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'social_one.native' }),
      await makeConnection(ctx.deps, tenant.workspace.id, { integrationKey: 'sms.twilio', externalAccountId: '+15557120001' }),
    ];
    await connectionHealth.down(db as Kysely<unknown>);
    await connectionWebhooks.down(db as Kysely<unknown>);
    await connectionWebhooks.up(db as Kysely<unknown>);
    await connectionHealth.up(db as Kysely<unknown>);
    const rows = await db
      .selectFrom('connections')
      .select(['id', 'integration_key', 'connection_key', 'webhook_verify_token'])
      .where(
        'id',
        'in',
        made.map((c) => c.id),
      )
      .orderBy('id')
      .execute();
    for (const r of rows) expect(r.connection_key).toMatch(/^ck_[0-9a-f]{24}$/);
    expect(new Set(rows.map((r) => r.connection_key)).size).toBe(rows.length);
    expect(rows.map((r) => r.webhook_verify_token === null)).toEqual([false, false, true]);
    // The URL works after the backfill: an unknown key is refused, the backfilled one is found.
    const res = await ctx.app.inject({
      method: 'GET',
      url: `/webhooks/sms.twilio/${rows[2]!.connection_key}?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`,
    });
    expect(res.json().error.message).toBe('challenge not accepted');
  });
});
