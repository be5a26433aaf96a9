import type { Kysely } from 'kysely';
import { describe, expect, it } from 'vitest';
import * as accountsAsDelivered from '../../migrations/0072_connection_accounts_as_delivered.js';
import * as smsNumbers from '../../migrations/0074_sms_numbers_in_e164.js';
import { findConnectionsByAccount } from '../../src/messaging/messaging.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

// This file's own clone of the migrated database: running 0072 or 0074 again touches no other.
const ctx = await useTestContext();
const db = ctx.deps.db;

/** A connection as an older version stored it: its account id exactly as it was given. */
async function storedAs(workspaceId: number, integrationKey: string, account: string, deleted = false) {
  const c = await makeConnection(ctx.deps, workspaceId, { integrationKey });
  await db
    .updateTable('connections')
    .set({ external_account_id: account, ...(deleted ? { deleted_at: new Date() } : {}) })
    .where('id', '=', c.id)
    .execute();
  return c.id;
}

const accountOf = async (id: number) =>
  (await db.selectFrom('connections').select('external_account_id').where('id', '=', id).executeTakeFirstOrThrow()).external_account_id;

describe('migration 0072_connection_accounts_as_delivered', () => {
  it('brings older connections’ account ids to the form deliveries name them, so they find their connection', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ws = tenant.workspace.id;
    const mail = await storedAs(ws, 'email.postmark', ' Support@Acme.test\n');
    const phone = await storedAs(ws, 'whatsapp', ' 106540352240001 ');
    const session = await storedAs(ws, 'aggregator', 'Agg-Acct-7');
    const deleted = await storedAs(ws, 'email', 'Gone@Acme.test', true);
    // Already taken by a live connection, which has had that account's deliveries all along.
    await storedAs(ws, 'email', 'sales@acme.test');
    const shadowed = await storedAs(ws, 'email', 'Sales@Acme.test');
    // Two that come to one id: only the older changes, so the unique index holds.
    const older = await storedAs(ws, 'email.mailgun', 'Help@Acme.test');
    const newer = await storedAs(ws, 'email.mailgun', 'HELP@acme.test');

    await accountsAsDelivered.up(db as Kysely<unknown>);

    expect(await accountOf(mail)).toBe('support@acme.test');
    expect(await accountOf(phone)).toBe('106540352240001');
    expect(await accountOf(session)).toBe('Agg-Acct-7');
    expect(await accountOf(deleted)).toBe('Gone@Acme.test');
    expect(await accountOf(shadowed)).toBe('Sales@Acme.test');
    expect(await accountOf(older)).toBe('help@acme.test');
    expect(await accountOf(newer)).toBe('HELP@acme.test');
    const found = await findConnectionsByAccount(db, [
      { integrationKey: 'email.postmark', externalAccountId: 'support@acme.test' },
      { integrationKey: 'whatsapp', externalAccountId: '106540352240001' },
    ]);
    expect(found.map((c) => c.id).sort()).toEqual([mail, phone].sort());
  });
});

describe('migration 0074_sms_numbers_in_e164', () => {
  it('brings SMS numbers stored with spacing to E.164, so inbound SMS finds their connection', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ws = tenant.workspace.id;
    const twilio = await storedAs(ws, 'sms.twilio', '+1 (555) 010-0000');
    const neutral = await storedAs(ws, 'sms', '+44 7700.900\u00a0123');
    const padded = await storedAs(ws, 'sms', ' +1-555-010-0001\n');
    // Not a number in E.164, or not a phone integration: kept as given.
    const shortCode = await storedAs(ws, 'sms', '55 123');
    const sender = await storedAs(ws, 'sms.twilio', 'MG-Acme (EU)');
    const whatsapp = await storedAs(ws, 'whatsapp', '+1 (555) 010-0002');
    const deleted = await storedAs(ws, 'sms.twilio', '+1 (555) 010-0003', true);
    // Already another live connection's number, which has had its deliveries all along.
    const holder = await storedAs(ws, 'sms.twilio', '+15550100004');
    const shadowed = await storedAs(ws, 'sms.twilio', '+1 555 010 0004');
    // Two that come to one number: only the older changes, so the unique index holds.
    const older = await storedAs(ws, 'sms', '+1 (555) 010-0005');
    const newer = await storedAs(ws, 'sms', '+1.555.010.0005');
    // The same number on the other SMS integration is no collision.
    const sibling = await storedAs(ws, 'sms', '+1 (555) 010-0004');

    await smsNumbers.up(db as Kysely<unknown>);

    expect(await accountOf(twilio)).toBe('+15550100000');
    expect(await accountOf(neutral)).toBe('+447700900123');
    expect(await accountOf(padded)).toBe('+15550100001');
    expect(await accountOf(shortCode)).toBe('55 123');
    expect(await accountOf(sender)).toBe('MG-Acme (EU)');
    expect(await accountOf(whatsapp)).toBe('+1 (555) 010-0002');
    expect(await accountOf(deleted)).toBe('+1 (555) 010-0003');
    expect(await accountOf(holder)).toBe('+15550100004');
    expect(await accountOf(shadowed)).toBe('+1 555 010 0004');
    expect(await accountOf(older)).toBe('+15550100005');
    expect(await accountOf(newer)).toBe('+1.555.010.0005');
    expect(await accountOf(sibling)).toBe('+15550100004');
    const found = await findConnectionsByAccount(db, [
      { integrationKey: 'sms.twilio', externalAccountId: '+15550100000' },
      { integrationKey: 'sms', externalAccountId: '+447700900123' },
      { integrationKey: 'sms', externalAccountId: '+15550100001' },
    ]);
    expect(found.map((c) => c.id).sort()).toEqual([twilio, neutral, padded].sort());
  });
});
