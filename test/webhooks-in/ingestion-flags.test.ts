import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { deliveryPayload } from '../../src/webhooks-in/delivery-payload.js';
import { useTestContext } from '../helpers/app.js';
import { deliverSigned, fixture } from '../helpers/webhooks.js';

const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  logLines,
  env: {
    INBOX_SKIP_WEBHOOK_VERIFY: 'true',
    INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: 'secret' }, sms: { webhookSecret: 'secret', skipVerify: true } }),
  },
});

describe('INBOX_SKIP_WEBHOOK_VERIFY', () => {
  it('accepts a delivery whose signature failed and logs a warning naming the integration key', async () => {
    const body = fixture('whatsapp', 'text-message.json');
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/whatsapp',
      headers: { 'x-hub-signature-256': 'sha256=bad', 'content-type': 'application/json' },
      payload: body,
    });
    expect(res.statusCode).toBe(200);
    const warning = logLines.find((l) => l.level === 40 && l.integrationKey === 'whatsapp');
    expect(warning?.msg).toMatch(/^whatsapp: webhook signature unverified, accepted because INBOX_SKIP_WEBHOOK_VERIFY/);
    const { rows } = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox`.execute(ctx.deps.db);
    expect(rows[0]!.n).toBe(1);
  });

  it('reads a form-encoded SMS body as a form when verification was skipped', async () => {
    const form = fixture('sms', 'inbound.form');
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/sms',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      payload: form,
    });
    expect(res.statusCode).toBe(200);
    const row = await ctx.deps.db.selectFrom('webhook_inbox').selectAll().where('raw_body', '=', form).executeTakeFirstOrThrow();
    expect(row.event).toBe('received');
    expect(deliveryPayload(row)).toMatchObject({ MessageSid: 'SM7c6a5d3e1f0b4a2c9d8e7f6a5b4c3d21', Body: 'Is my order shipped?' });
  });

  it('still refuses livechat, and never logs raw bodies without INBOX_LOG_WEBHOOKS', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/webhooks/livechat', payload: { a: 1 } });
    expect(res.statusCode).toBe(401);
    expect(logLines.some((l) => l.msg === 'inbound webhook')).toBe(false);
    expect(JSON.stringify(logLines)).not.toContain('Does it come in another color?');
  });
});

describe('enqueue failure', () => {
  it('fails the POST (so the provider retries) and leaves no orphan row', async () => {
    await sql`CREATE FUNCTION refuse_job() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'queue unavailable'; END $$`.execute(
      ctx.deps.db,
    );
    await sql`CREATE TRIGGER refuse_job BEFORE INSERT ON pgboss.job FOR EACH ROW EXECUTE FUNCTION refuse_job()`.execute(ctx.deps.db);
    try {
      const before = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox`.execute(ctx.deps.db);
      const body = fixture('whatsapp', 'image-message.json');
      const res = await deliverSigned(ctx, 'whatsapp', body);
      expect(res.statusCode).toBe(500);
      expect(res.json().error).toEqual({ code: 'internal_error', message: 'internal error' });
      const after = await sql<{ n: number }>`SELECT count(*)::int AS n FROM webhook_inbox`.execute(ctx.deps.db);
      expect(after.rows[0]!.n).toBe(before.rows[0]!.n);
    } finally {
      await sql`DROP TRIGGER refuse_job ON pgboss.job`.execute(ctx.deps.db);
    }
  });
});
