import { describe, expect, it } from 'vitest';
import { linkKey, signedLink } from '../../src/attachments/signed-links.js';
import { createLogger, RequestLogger } from '../../src/logger.js';
import { useTestContext } from '../helpers/app.js';
import { deliverSigned, fixture } from '../helpers/webhooks.js';

const WA_SECRET = 'wa-signing-secret-never-logged';
const VERIFY_TOKEN = 'social-verify-token-never-logged';
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  logLines,
  env: {
    INBOX_INTEGRATIONS: JSON.stringify({
      whatsapp: { webhookSecret: WA_SECRET },
      'social_one.native': { appSecret: 'app-secret-x', webhookVerifyToken: VERIFY_TOKEN },
    }),
  },
});

/** Everything a set of log lines holds, as one searchable string. */
const written = (lines: unknown[]) => lines.map((l) => JSON.stringify(l)).join('\n');

describe('request logs', () => {
  it('never carry the query of a /webhooks/* challenge, right token or wrong', async () => {
    const urls = [
      `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${WA_SECRET}&hub.challenge=42`,
      `/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=${WA_SECRET}x&hub.challenge=42`,
      `/webhooks/social_one.native?hub.mode=subscribe&hub.verify_token=${VERIFY_TOKEN}&hub.challenge=43`,
      `/webhooks/social_one.native?hub.verify_token=${VERIFY_TOKEN}-wrong&hub.mode=subscribe&hub.challenge=43`,
    ];
    const statuses = [];
    for (const url of urls) statuses.push((await ctx.app.inject({ method: 'GET', url })).statusCode);
    expect(statuses).toEqual([200, 404, 200, 404]);
    const text = written(logLines);
    expect(text).toContain('request completed'); // requests are logged at info…
    expect(text).not.toContain(WA_SECRET); // …but not the secret,
    expect(text).not.toContain(VERIFY_TOKEN); // nor the verify token,
    expect(text).not.toContain('hub.challenge'); // nor any of the query
    const logged = logLines.map((l) => (l.req as { url?: string } | undefined)?.url).filter(Boolean);
    expect(logged).toContain('/webhooks/whatsapp');
  });

  it('redact token= and visitorToken= values on any other route', async () => {
    await ctx.app.inject({ method: 'GET', url: '/v1/realtime?x=1&token=socket-token-abc&visitorToken=visitor-token-def' });
    await ctx.app.inject({ method: 'GET', url: '/healthz?visitortoken=visitor-token-ghi' });
    const text = written(logLines);
    for (const secret of ['socket-token-abc', 'visitor-token-def', 'visitor-token-ghi']) expect(text).not.toContain(secret);
    const logged = logLines.map((l) => (l.req as { url?: string } | undefined)?.url);
    expect(logged).toContain('/v1/realtime?x=1&token=[redacted]&visitorToken=[redacted]');
  });

  it("redact a signed attachment link's signature and expires, however the names are spelt", async () => {
    const link = signedLink({ publicUrl: 'http://x', key: linkKey(ctx.deps.secretKey), now: new Date() }, 4242);
    const query = new URL(link).search;
    const expires = new URLSearchParams(query).get('expires')!;
    const signature = new URLSearchParams(query).get('signature')!;
    const urls = [
      `/v1/attachments/4242/content${query}`,
      `/v1/attachments/4242/content?SIGNATURE=${signature}&Expires=${expires}`,
      `/v1/attachments/4242/content?%73ignature=${signature}&expire%73=${expires}&x=1`,
    ];
    for (const url of urls) await ctx.app.inject({ method: 'GET', url });
    const text = written(logLines);
    expect(text).not.toContain(signature);
    expect(text).not.toContain(expires);
    const logged = logLines.map((l) => (l.req as { url?: string } | undefined)?.url);
    expect(logged).toContain('/v1/attachments/4242/content?expires=[redacted]&signature=[redacted]');
  });

  it("redact a CSAT survey's token in its path and the SSO callback's code and state", async () => {
    const survey = 'csat-token-in-the-path-xyz';
    await ctx.app.inject({ method: 'GET', url: `/csat/${survey}` });
    await ctx.app.inject({ method: 'POST', url: `/csat/${survey}?x=1`, payload: { rating: 5 } });
    await ctx.app.inject({ method: 'GET', url: '/auth/sso/callback?code=sso-code-abc&state=sso-state-def&iss=https%3A%2F%2Fidp' });
    const text = written(logLines);
    for (const secret of [survey, 'sso-code-abc', 'sso-state-def']) expect(text).not.toContain(secret);
    const logged = logLines.map((l) => (l.req as { url?: string } | undefined)?.url);
    expect(logged).toContain('/csat/[redacted]');
    expect(logged).toContain('/csat/[redacted]?x=1');
    expect(logged).toContain('/auth/sso/callback?code=[redacted]&state=[redacted]&iss=https%3A%2F%2Fidp');
  });
});

describe('one line per request', () => {
  const linesOf = (requestId: string) => logLines.filter((l) => l.reqId === requestId);

  it('writes one compact line for an API request, none for an accepted delivery, one for a refused one', async () => {
    const api = await ctx.app.inject({ method: 'GET', url: '/healthz' });
    const apiLines = linesOf(api.headers['x-request-id'] as string);
    expect(apiLines).toHaveLength(1);
    expect(apiLines[0]).toMatchObject({ msg: 'request completed', status: 200, req: { method: 'GET', url: '/healthz' } });
    expect(apiLines[0]!.ms).toEqual(expect.any(Number));

    const body = fixture('whatsapp', 'text-message.json');
    const accepted = await deliverSigned(ctx, 'whatsapp', body);
    expect(accepted.statusCode).toBe(200);
    // counted in /metrics instead (inbox_webhook_deliveries_total{outcome="accepted"})
    expect(linesOf(accepted.headers['x-request-id'] as string)).toEqual([]);

    const refused = await ctx.app.inject({
      method: 'POST',
      url: '/webhooks/whatsapp',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': 'sha256=00' },
      payload: body,
    });
    expect(refused.statusCode).toBe(401);
    expect(linesOf(refused.headers['x-request-id'] as string)).toEqual([
      expect.objectContaining({ msg: 'request completed', status: 401 }),
    ]);
  });
});

describe('RequestLogger', () => {
  it('makes the child logger only for a line at an enabled level, with the bindings and redaction of a real child', () => {
    const lines: Record<string, unknown>[] = [];
    const parent = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    let children = 0;
    const child = parent.child.bind(parent);
    parent.child = ((...args: Parameters<typeof child>) => {
      children++;
      return child(...args);
    }) as typeof parent.child;

    const quiet = new RequestLogger(parent, { reqId: 'r-1' }, {});
    quiet.debug('not written at info');
    expect(quiet.isLevelEnabled('debug')).toBe(false);
    expect(children).toBe(0);
    expect(lines).toEqual([]);

    const used = new RequestLogger(parent, { reqId: 'r-2' }, {});
    used.info({ token: 'request-token' }, 'written');
    used.warn('again');
    expect(children).toBe(1);
    expect(lines).toEqual([
      expect.objectContaining({ reqId: 'r-2', msg: 'written', token: '[redacted]' }),
      expect.objectContaining({ reqId: 'r-2', msg: 'again' }),
    ]);
  });
});

describe('createLogger redaction', () => {
  it('censors what is really written: error objects carrying requests, secret fields at any of three levels', () => {
    const lines: unknown[] = [];
    const log = createLogger('info', { write: (line: string) => void lines.push(JSON.parse(line)) });
    const clientError = Object.assign(new Error('request to provider failed'), {
      config: { url: 'https://graph.example/x', headers: { authorization: 'Bearer err-config-bearer' } },
      request: { headers: { 'x-api-key': 'err-request-key' } },
      response: { status: 401, headers: { 'set-cookie': 'sid=err-response-cookie' }, config: { auth: 'err-response-config' } },
      headers: { 'x-vendor-auth': 'err-vendor-auth', authorization: 'Bearer err-headers-bearer' },
    });
    log.error({ err: clientError }, 'outbound failed');
    log.info(
      { password: 'top-password', user: { password: 'nested-password' }, body: { credentials: { password: 'deep-password' } } },
      'fields',
    );
    log.info(
      { headers: { 'x-hub-signature-256': 'sha256=hubsigvalue', 'x-service-signature': 'svcsigvalue', cookie: 'c=cookie-val' } },
      'headers',
    );
    log.info({ connection: { accessToken: 'conn-access-token', webhookSecret: 'conn-webhook-secret' }, token: 'bare-token' }, 'connection');
    log.info(
      {
        body: { name: 'x', credentials: { accessToken: 'body-cred-token', accountSid: 'body-cred-sid' } },
        smtpUrl: 'smtp://u:smtp-pass@h',
      },
      'credentials',
    );
    log.info({ config: { secretKey: 'cfg-secret-key' } }, 'config key');
    log.info(
      { config: { jwtSecret: 'cfg-jwt', integrations: { email: { webhookSecret: 'cfg-email-secret', appSecret: 'cfg-app' } } } },
      'config',
    );
    log.info({ req: { method: 'GET', url: '/webhooks/whatsapp?hub.verify_token=req-serializer-token', ip: '10.0.0.1' } }, 'req');
    const text = written(lines);
    for (const secret of [
      'err-config-bearer',
      'err-request-key',
      'err-response-cookie',
      'err-response-config',
      'err-vendor-auth',
      'err-headers-bearer',
      'top-password',
      'nested-password',
      'deep-password',
      'hubsigvalue',
      'svcsigvalue',
      'cookie-val',
      'conn-access-token',
      'conn-webhook-secret',
      'bare-token',
      'cfg-jwt',
      'cfg-email-secret',
      'body-cred-token',
      'body-cred-sid',
      'smtp-pass',
      'cfg-secret-key',
      'cfg-app',
      'req-serializer-token',
    ]) {
      expect(text, secret).not.toContain(secret);
    }
    // what is not a secret still gets through
    expect(text).toContain('request to provider failed');
    expect(text).toContain('"status":401');
    expect(text).toContain('"url":"/webhooks/whatsapp"');
    expect(text).toContain('10.0.0.1');
  });
});
