import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env, '/srv/inbox');
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return (err as ConfigError).problems;
  }
  throw new Error('expected a ConfigError');
}

describe('loadConfig', () => {
  it('has the documented defaults', () => {
    const config = loadConfig({}, '/srv/inbox');
    expect(config).toMatchObject({
      databaseUrl: undefined,
      dataDir: '/srv/inbox/.data',
      port: 3000,
      host: '127.0.0.1',
      jwtSecret: undefined,
      integrations: {},
      skipWebhookVerify: false,
      logWebhooks: false,
      logLevel: 'info',
      bodyLimitBytes: 1048576,
      trustProxy: false,
      ingestMaxPending: 5000,
      retentionDays: 30,
      deadLetterRetentionDays: 90,
      allowPrivateSmtp: false,
      allowPrivateSso: false,
      maxWebhookEndpoints: 20,
      maxNewConversationsPerMinute: 60,
      livechatMaxAttachmentBytes: 10 * 1024 * 1024,
      livechatUploadBytesPerHour: 500 * 1024 * 1024,
      metricsToken: undefined,
    });
  });

  it('reads the tenant limits and the metrics token, and refuses a bad endpoint cap', () => {
    expect(
      loadConfig(
        {
          INBOX_ALLOW_PRIVATE_SMTP: 'true',
          INBOX_MAX_WEBHOOK_ENDPOINTS: '5',
          INBOX_METRICS_TOKEN: ' scrape-token ',
          INBOX_MAX_NEW_CONVERSATIONS_PER_MINUTE: '7',
        },
        '/srv/inbox',
      ),
    ).toMatchObject({
      allowPrivateSmtp: true,
      maxWebhookEndpoints: 5,
      maxNewConversationsPerMinute: 7,
      metricsToken: 'scrape-token',
    });
    expect(problems({ INBOX_MAX_WEBHOOK_ENDPOINTS: '0' })).toEqual([
      'INBOX_MAX_WEBHOOK_ENDPOINTS: expected a whole number from 1 to 10000, got "0"',
    ]);
    expect(problems({ INBOX_ALLOW_PRIVATE_SMTP: 'maybe' })).toEqual(['INBOX_ALLOW_PRIVATE_SMTP: expected true or false, got "maybe"']);
  });

  it('trusts only the proxies INBOX_TRUST_PROXY names; true means loopback, never every hop', () => {
    expect(loadConfig({ INBOX_TRUST_PROXY: 'false' }).trustProxy).toBe(false);
    expect(loadConfig({ INBOX_TRUST_PROXY: 'true' }).trustProxy).toEqual(['loopback']);
    expect(loadConfig({ INBOX_TRUST_PROXY: '10.0.0.1, 192.168.0.0/16,::1,fd00::/8' }).trustProxy).toEqual([
      '10.0.0.1',
      '192.168.0.0/16',
      '::1',
      'fd00::/8',
    ]);
  });

  it('refuses development switches when NODE_ENV=production', () => {
    const base = { NODE_ENV: 'production', INBOX_JWT_SECRET: 'x'.repeat(32), INBOX_SECRET_KEY: 'ab'.repeat(32) };
    expect(() => loadConfig(base)).not.toThrow();
    expect(problems({ ...base, INBOX_SKIP_WEBHOOK_VERIFY: 'true' })).toEqual([
      expect.stringMatching(/^INBOX_SKIP_WEBHOOK_VERIFY: must not be true when NODE_ENV=production/),
    ]);
    expect(problems({ ...base, INBOX_INTEGRATIONS: JSON.stringify({ sms: { webhookSecret: 's', skipVerify: true } }) })).toEqual([
      expect.stringMatching(/^INBOX_INTEGRATIONS: "sms.skipVerify" must not be true when NODE_ENV=production/),
    ]);
    // Outside production both remain available for development.
    expect(
      loadConfig({ INBOX_SKIP_WEBHOOK_VERIFY: 'true', INBOX_INTEGRATIONS: JSON.stringify({ sms: { skipVerify: true } }) })
        .skipWebhookVerify,
    ).toBe(true);
  });

  it('reads integrations keyed by integration key with the fields docs/webhooks.md names', () => {
    const config = loadConfig({
      INBOX_INTEGRATIONS: JSON.stringify({
        whatsapp: { webhookSecret: 's', providerReportSecret: 'r', skipVerify: false },
        'social_one.native': { appSecret: 'a', webhookVerifyToken: 't' },
      }),
    });
    expect(config.integrations.whatsapp).toEqual({ webhookSecret: 's', providerReportSecret: 'r', skipVerify: false });
    expect(config.integrations['social_one.native']).toEqual({ appSecret: 'a', webhookVerifyToken: 't' });
  });

  it('reads integrations from INBOX_INTEGRATIONS_FILE', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-config-'));
    await writeFile(path.join(dir, 'integrations.json'), JSON.stringify({ sms: { webhookSecret: 'abc' } }));
    expect(loadConfig({ INBOX_INTEGRATIONS_FILE: 'integrations.json' }, dir).integrations.sms).toEqual({ webhookSecret: 'abc' });
    expect(problems({ INBOX_INTEGRATIONS_FILE: path.join(dir, 'missing.json') })).toEqual([
      expect.stringMatching(/^INBOX_INTEGRATIONS_FILE: cannot read/),
    ]);
  });

  it.each([
    [{ PORT: 'abc' }, /^PORT: expected a whole number from 0 to 65535, got "abc"$/],
    [{ PORT: '70000' }, /^PORT: /],
    [{ DATABASE_URL: 'mysql://x' }, /^DATABASE_URL: /],
    [{ DATABASE_URL: 'postgres://inbox:pw@db:99999/inbox' }, /^DATABASE_URL: expected a postgres:\/\/ or postgresql:\/\/ URL$/],
    [{ DATABASE_URL: 'postgres://inbox:pw@[::1/inbox' }, /^DATABASE_URL: /],
    [{ DATABASE_URL: 'postgres://db/inbox', DATABASE_REPLICA_URL: 'mysql://x' }, /^DATABASE_REPLICA_URL: expected a postgres/],
    [{ DATABASE_REPLICA_URL: 'postgres://replica/inbox' }, /^DATABASE_REPLICA_URL: needs DATABASE_URL/],
    [{ INBOX_REPLICA_MAX_LAG_MS: '0' }, /^INBOX_REPLICA_MAX_LAG_MS: expected a whole number from 1/],
    [{ INBOX_INTEGRATIONS: '{not json' }, /^INBOX_INTEGRATIONS: not valid JSON/],
    [{ INBOX_INTEGRATIONS: '[]' }, /^INBOX_INTEGRATIONS: expected a JSON object/],
    [{ INBOX_INTEGRATIONS: '{"whatsap":{}}' }, /^INBOX_INTEGRATIONS: unknown integration key "whatsap"/],
    [{ INBOX_INTEGRATIONS: '{"whatsapp":{"secret":"x"}}' }, /^INBOX_INTEGRATIONS: "whatsapp.secret" is not a known field/],
    [{ INBOX_INTEGRATIONS: '{"whatsapp":{"skipVerify":"yes"}}' }, /^INBOX_INTEGRATIONS: "whatsapp.skipVerify" must be a boolean/],
    [
      { INBOX_INTEGRATIONS: '{"whatsapp_session":{"webhookSecret":"short"}}' },
      /whatsapp_session.webhookSecret" must be 16 to 255 characters/,
    ],
    [{ INBOX_INTEGRATIONS: JSON.stringify({ whatsapp_session: { webhookSecret: 'x'.repeat(256) } }) }, /16 to 255/],
    [{ NODE_ENV: 'production', INBOX_SECRET_KEY: 'ab'.repeat(32) }, /^INBOX_JWT_SECRET: required when NODE_ENV=production/],
    [{ NODE_ENV: 'production', INBOX_JWT_SECRET: 'x'.repeat(32) }, /^INBOX_SECRET_KEY: required when NODE_ENV=production \(a 32-byte key/],
    [
      { INBOX_SECRET_KEY: 'ab'.repeat(31) },
      /^INBOX_SECRET_KEY: expected a 32-byte key as 64 hex characters or 44 base64 characters.*, got 62 characters$/,
    ],
    [{ INBOX_SECRET_KEY: Buffer.alloc(32, 7).toString('base64').slice(0, 43) }, /^INBOX_SECRET_KEY: expected .*, got 43 characters$/],
    [{ INBOX_SECRET_KEY: 'g'.repeat(64) }, /^INBOX_SECRET_KEY: /],
    [{ INBOX_JWT_SECRET: 'too-short' }, /^INBOX_JWT_SECRET: must be at least 32 characters/],
    [{ INBOX_SKIP_WEBHOOK_VERIFY: 'maybe' }, /^INBOX_SKIP_WEBHOOK_VERIFY: expected true or false/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL: /],
    [{ INBOX_ADMIN_API_KEY: 'x'.repeat(31) }, /^INBOX_ADMIN_API_KEY: must be at least 32 characters/],
    [{ INBOX_TRUST_PROXY: 'everyone' }, /^INBOX_TRUST_PROXY: expected false, true \(loopback\) or a comma-separated list/],
    [{ INBOX_TRUST_PROXY: '10.0.0.0/33' }, /^INBOX_TRUST_PROXY: /],
    [{ INBOX_TRUST_PROXY: '10.0.0.1,nope' }, /^INBOX_TRUST_PROXY: .*"nope"/],
    [{ INBOX_INGEST_MAX_PENDING: '0' }, /^INBOX_INGEST_MAX_PENDING: /],
    [{ INBOX_RETENTION_DAYS: 'forever' }, /^INBOX_RETENTION_DAYS: /],
    [{ INBOX_DEAD_LETTER_RETENTION_DAYS: '-1' }, /^INBOX_DEAD_LETTER_RETENTION_DAYS: /],
  ])('refuses %j naming the variable', (env, pattern) => {
    const found = problems(env);
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(pattern);
  });

  it('reads INBOX_SECRET_KEY as 64 hex or 44 base64 characters (32 bytes); unset outside production', () => {
    const key = Buffer.alloc(32, 0xa5);
    expect(loadConfig({ INBOX_SECRET_KEY: key.toString('hex') }).secretKey?.equals(key)).toBe(true);
    expect(loadConfig({ INBOX_SECRET_KEY: key.toString('base64') }).secretKey?.equals(key)).toBe(true);
    expect(loadConfig({}).secretKey).toBeUndefined();
  });

  it('accepts a whatsapp_session secret of exactly 16 and 255 characters', () => {
    for (const n of [16, 255]) {
      const config = loadConfig({ INBOX_INTEGRATIONS: JSON.stringify({ whatsapp_session: { webhookSecret: 'x'.repeat(n) } }) });
      expect(config.integrations.whatsapp_session?.webhookSecret).toHaveLength(n);
    }
  });

  it('never echoes the text of unparseable INBOX_INTEGRATIONS, whose values are secrets', () => {
    for (const text of ['{"whatsapp":{"appSecret":s3cr3t-app-value}}', '{"whatsapp":{"appSecret":"s3cr3t-app-value"}}}']) {
      const found = problems({ INBOX_INTEGRATIONS: text });
      expect(found).toHaveLength(1);
      expect(found[0]).toMatch(/^INBOX_INTEGRATIONS: not valid JSON \(.+\)$/);
      expect(found[0]).not.toMatch(/s3cr3t|app-value|appSecret/);
    }
  });

  it('takes a DATABASE_URL without a host, for a socket directory', () => {
    expect(loadConfig({ DATABASE_URL: 'postgres://inbox@/inbox?host=/run/postgresql' }).databaseUrl).toBe(
      'postgres://inbox@/inbox?host=/run/postgresql',
    );
  });

  it('reports every problem at once', () => {
    expect(problems({ PORT: 'x', LOG_LEVEL: 'loud', INBOX_LOG_WEBHOOKS: '2' })).toHaveLength(3);
  });
});

describe('INBOX_PUBLIC_URL (publicUrl)', () => {
  it('defaults to http://HOST:PORT, brackets an IPv6 host, and drops a trailing slash', () => {
    expect(loadConfig({}, '/srv/inbox').publicUrl).toBe('http://127.0.0.1:3000');
    expect(loadConfig({ HOST: '::1', PORT: '8080' }, '/srv/inbox').publicUrl).toBe('http://[::1]:8080');
    expect(loadConfig({ INBOX_PUBLIC_URL: 'https://inbox.example.com/' }, '/srv/inbox').publicUrl).toBe('https://inbox.example.com');
    expect(loadConfig({ INBOX_PUBLIC_URL: 'https://example.com/inbox/' }, '/srv/inbox').publicUrl).toBe('https://example.com/inbox');
  });
  it('refuses what is not an http(s) base URL', () => {
    for (const value of [
      'inbox.example.com',
      'ftp://inbox.example.com',
      'https://inbox.example.com/?a=1',
      'https://u:p@inbox.example.com',
    ]) {
      expect(problems({ INBOX_PUBLIC_URL: value })).toEqual([expect.stringMatching(/^INBOX_PUBLIC_URL: /)]);
    }
    expect(problems({ INBOX_PUBLIC_URL: 'https://proxy:s3cret@inbox.example.com' })).toEqual([
      'INBOX_PUBLIC_URL: expected an http(s) URL without credentials, query or fragment, got "https://proxy:***@inbox.example.com/"',
    ]);
  });
  it('knows the authToken field of sms.twilio', () => {
    const config = loadConfig({ INBOX_INTEGRATIONS: JSON.stringify({ 'sms.twilio': { authToken: 't' } }) }, '/srv/inbox');
    expect(config.integrations['sms.twilio']).toEqual({ authToken: 't' });
  });
});
