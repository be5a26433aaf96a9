import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { startFakeProviders } from '../../harness/fake-providers.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';

const NEW_PER_MINUTE = 3;
const fake = await startFakeProviders();
afterAll(() => fake.close());
const ctx = await useTestContext({
  workers: true,
  env: {
    INBOX_MAX_NEW_CONVERSATIONS_PER_MINUTE: String(NEW_PER_MINUTE),
    INBOX_INTEGRATIONS: JSON.stringify({
      'sms.twilio': {
        authToken: 'twilio-auth-token-0123456789',
        accountSid: 'AC0123456789abcdef0123456789abcdef',
        apiBaseUrl: fake.baseUrls.sms,
      },
    }),
  },
});

const unique = () => randomBytes(4).toString('hex');
let phones = 100;
/** A valid E.164 number of its own for each conversation (415 555 01xx). */
const phone = () => `+14155550${phones++}`;
const start = (headers: Record<string, string>, payload: Record<string, unknown>, extra: Record<string, string> = {}) =>
  ctx.app.inject({
    method: 'POST',
    url: '/v1/conversations',
    headers: { ...headers, 'content-type': 'application/json', ...extra },
    payload,
  });
const operatorConnection = (workspaceId: number, account: string) =>
  makeConnection(ctx.deps, workspaceId, { integrationKey: 'sms.twilio', externalAccountId: account });

describe('POST /v1/conversations per workspace and minute', () => {
  it(`takes ${NEW_PER_MINUTE}, then answers 429 rate_limited with retry-after and writes nothing; other workspaces go on`, async () => {
    const tenant = await makeTenant(ctx.deps);
    const other = await makeTenant(ctx.deps);
    const connection = await operatorConnection(tenant.workspace.id, `+1666${unique()}`);
    const elsewhere = await operatorConnection(other.workspace.id, `+1777${unique()}`);
    const firstTo = phone();
    const first = await start(tenant.headers, { connectionId: connection.id, to: firstTo, text: 'one' }, { 'idempotency-key': 'k-1' });
    expect(first.statusCode, first.body).toBe(202);
    for (let i = 1; i < NEW_PER_MINUTE; i++) {
      expect((await start(tenant.headers, { connectionId: connection.id, to: phone(), text: 'more' })).statusCode).toBe(202);
    }
    const counts = async () =>
      Promise.all(
        (['contacts', 'threads', 'messages'] as const).map(async (t) =>
          Number(
            (
              await ctx.deps.db
                .selectFrom(t)
                .select((eb) => eb.fn.countAll().as('n'))
                .where('workspace_id', '=', tenant.workspace.id)
                .executeTakeFirstOrThrow()
            ).n,
          ),
        ),
      );
    const before = await counts();
    const refused = await start(tenant.headers, { connectionId: connection.id, to: phone(), name: 'Nobody', text: 'too many' });
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json().error.code).toBe('rate_limited');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expect(await counts()).toEqual(before);
    // A replayed idempotency key answers its first answer: it starts nothing new, so it is not refused.
    const replay = await start(tenant.headers, { connectionId: connection.id, to: firstTo, text: 'one' }, { 'idempotency-key': 'k-1' });
    expect(replay.statusCode).toBe(202);
    expect(replay.json().data.message.id).toBe(first.json().data.message.id);
    // The limit is the workspace's own.
    expect((await start(other.headers, { connectionId: elsewhere.id, to: phone(), text: 'fine' })).statusCode).toBe(202);
  });
});
