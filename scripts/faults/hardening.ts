// Part 7: no tenant can reach inside, starve or crash the service (docs/security.md). One
// role-all process with small visitor-socket limits; two workspaces' webhook endpoints, one
// set hanging past the 10 s deadline; sealed secrets and credentials replaced by another
// deployment's; visitor sockets from two loopback addresses; an smtpUrl naming loopback.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import WebSocket from 'ws';
import { freshDatabase } from '../../harness/checks.js';
import { signedDelivery } from '../../harness/load.js';
import {
  ADMIN_KEY,
  PHONE_NUMBER_ID,
  pause,
  provisionTenant,
  ROOT,
  type Service,
  startService,
  WEBHOOK_SECRET,
  waitUntil,
} from '../../harness/service.js';
import { whatsappTextBody } from '../../harness/whatsapp-delivery.js';
import { CREDENTIALS_DO_NOT_OPEN, sealCredentials } from '../../src/connections/connection-credentials.js';
import { hmacSha256Hex } from '../../src/crypto/hmac.js';
import { ENDPOINT_IN_FLIGHT, WORKSPACE_JOBS } from '../../src/webhooks-out/dispatcher.js';
import { sealSecret } from '../../src/webhooks-out/endpoint-secrets.js';
import { SECRET_REASON } from '../../src/webhooks-out/settle.js';
import { BANNER, startCountingListener, startWebhookReceiver } from './hardening-peers.js';
import type { FaultPart } from './part.js';

/** The service's default INBOX_MAX_WEBHOOK_ENDPOINTS. */
const MAX_ENDPOINTS = 20;
/** One attempt's deadline: no other workspace's event may wait longer for a slot. */
const ATTEMPT_MS = 10_000;
const SOCKETS_PER_ADDRESS = 3;
const EMAIL_SECRET = randomBytes(16).toString('hex');
/** Another deployment's INBOX_SECRET_KEY: what it sealed does not open here. */
const FOREIGN_KEY = randomBytes(32);

interface Answer {
  status: number;
  headers: Headers;
  body: { data?: Record<string, unknown>; error?: { code: string; message: string } } | null;
}

function client(base: string) {
  return async (
    method: string,
    route: string,
    options: { headers?: Record<string, string>; json?: unknown; body?: string } = {},
  ): Promise<Answer> => {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { ...(options.json !== undefined ? { 'content-type': 'application/json' } : {}), ...options.headers },
      body: options.json !== undefined ? JSON.stringify(options.json) : options.body,
    });
    const text = await res.text();
    let body: Answer['body'] = null;
    try {
      body = JSON.parse(text) as Answer['body'];
    } catch {
      // Not JSON (metrics): the status is what is checked.
    }
    return { status: res.status, headers: res.headers, body };
  };
}

/** One signed WhatsApp delivery carrying `count` text messages; resolves with its answer's status. */
async function ingestBurst(base: string, count: number): Promise<number> {
  const run = randomBytes(4).toString('hex');
  const one = (n: number) =>
    JSON.parse(
      whatsappTextBody({
        phoneNumberId: PHONE_NUMBER_ID,
        from: '447700900123',
        name: 'Burst',
        id: `wamid.hardening.${run}.${n}`,
        text: `${n}`,
      }),
    ) as { entry: { changes: { value: { messages: unknown[] } }[] }[] };
  const body = one(0);
  body.entry[0]!.changes[0]!.value.messages = Array.from({ length: count }, (_, n) => one(n).entry[0]!.changes[0]!.value.messages[0]);
  const raw = JSON.stringify(body);
  const res = await fetch(`${base}/webhooks/whatsapp`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacSha256Hex(WEBHOOK_SECRET, raw)}` },
    body: raw,
  });
  return res.status;
}

/** Opens a visitor socket from `localAddress`; resolves with 'admitted' once the server answered a ping after the upgrade, or the close code. */
function visitorSocket(url: string, localAddress: string): Promise<{ ws: WebSocket; outcome: 'admitted' | number }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, { localAddress });
    ws.once('error', reject);
    ws.once('close', (code) => resolve({ ws, outcome: code }));
    // The limit is applied when the server takes the socket, before it reads a frame: a pong
    // means the socket was admitted.
    ws.once('open', () => ws.ping());
    ws.once('pong', () => resolve({ ws, outcome: 'admitted' }));
  });
}

/** The status a websocket upgrade is answered with (101 when accepted). */
function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => resolve(0));
  });
}

export const hardeningPart: FaultPart = {
  key: 'hardening',
  title: '7. hardening: no tenant reaches inside, starves or crashes the service',
  async run({ postgres, fake }, report) {
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_hardening');
    const db = new pg.Pool({ connectionString: url, max: 3 });
    const hang = await startWebhookReceiver('hang');
    const healthy = await startWebhookReceiver('ok');
    const listener = await startCountingListener();
    const metricsToken = randomBytes(16).toString('hex');
    let svc: Service | undefined;
    try {
      svc = await startService({
        role: 'all',
        databaseUrl: url,
        env: {
          INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true',
          INBOX_LIVECHAT_MAX_SOCKETS_PER_ADDRESS: String(SOCKETS_PER_ADDRESS),
          INBOX_METRICS_TOKEN: metricsToken,
          INBOX_INTEGRATIONS: JSON.stringify({
            whatsapp: { webhookSecret: WEBHOOK_SECRET, accessToken: 'faults-token', apiBaseUrl: fake.baseUrls.whatsapp },
            email: { webhookSecret: EMAIL_SECRET },
          }),
        },
      });
      const service = svc;
      const call = client(service.url);
      const admin = { 'x-service-admin-api-key': ADMIN_KEY };
      const adminKey = async (workspaceId: number) => {
        const res = await call('POST', `/v1/engage/workspaces/${workspaceId}/api-keys`, {
          headers: admin,
          json: { name: 'hardening', scopes: ['admin'] },
        });
        return { 'x-api-key': String(res.body?.data?.key) };
      };
      const workspace = async (name: string) => {
        const res = await call('POST', '/v1/engage/workspaces', { headers: admin, json: { name } });
        return Number(res.body?.data?.id);
      };
      const endpoint = (headers: Record<string, string>, target: string) =>
        call('POST', '/v1/webhook-endpoints', { headers, json: { url: target, events: ['message.created'] } });
      const ingest = async () => {
        const d = signedDelivery();
        return (await fetch(`${service.url}/webhooks/whatsapp`, { method: 'POST', headers: d.headers, body: d.body })).status;
      };

      const a = await provisionTenant(service.url, 'Hanging receivers');
      const aAdmin = await adminKey(a.workspaceId);
      const bId = await workspace('Healthy receiver');
      const bAdmin = await adminKey(bId);
      report.did(
        `role all; INBOX_LIVECHAT_MAX_SOCKETS_PER_ADDRESS=${SOCKETS_PER_ADDRESS}, INBOX_METRICS_TOKEN set, INBOX_ALLOW_PRIVATE_SMTP unset`,
      );

      // ---------------------------------------------------------------- (a) fair slots, endpoint cap
      const hangingIds: number[] = [];
      for (let n = 0; n < MAX_ENDPOINTS; n++) {
        const res = await endpoint(aAdmin, `${hang.url}/a${n}`);
        if (res.status === 201) hangingIds.push(Number(res.body?.data?.id));
      }
      const over = await endpoint(aAdmin, `${hang.url}/a${MAX_ENDPOINTS}`);
      report.check(
        `endpoint ${MAX_ENDPOINTS + 1} of a workspace is refused 422 (INBOX_MAX_WEBHOOK_ENDPOINTS)`,
        hangingIds.length === MAX_ENDPOINTS && over.status === 422 && over.body?.error?.code === 'validation_failed',
        `${hangingIds.length} created, the next answered ${over.status} ${over.body?.error?.code ?? ''}: ${over.body?.error?.message ?? ''}`,
      );
      const healthyEndpoint = await endpoint(bAdmin, `${healthy.url}/b`);
      const healthyId = Number(healthyEndpoint.body?.data?.id);
      // The slots A holds, as the queue records them: its endpoints' active jobs, sampled.
      let maxActive = 0;
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const { rows } = await db.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'outbound-webhook' AND state = 'active' AND group_id = ANY($1::text[])`,
            [hangingIds.map(String)],
          );
          maxActive = Math.max(maxActive, rows[0]!.n);
          await pause(200);
        }
      })();
      // One delivery of 30 messages: each endpoint's first job holds all 30, ten in flight.
      const burst = await ingestBurst(service.url, 30);
      report.did(
        `workspace A: ${MAX_ENDPOINTS} endpoints on a receiver that never answers, one delivery of 30 messages (answered ${burst}) → ${30 * MAX_ENDPOINTS} message.created deliveries; workspace B: one endpoint on a receiver that answers 204`,
      );
      await waitUntil(
        "workspace A's hanging receivers to take their half of the slots",
        async () => hang.hanging() >= WORKSPACE_JOBS * ENDPOINT_IN_FLIGHT,
        30_000,
      ).catch(async (err: Error) => {
        const { rows } = await db.query(
          `SELECT (SELECT count(*)::int FROM messages) AS messages, (SELECT count(*)::int FROM webhook_events) AS events,
                  (SELECT json_object_agg(status, n) FROM (SELECT status, count(*)::int AS n FROM webhook_deliveries GROUP BY status) s) AS deliveries`,
        );
        throw new Error(`${err.message}: ${hang.requests()} requests reached it; ${JSON.stringify(rows[0])}`);
      });
      // B's events while A's attempts hang, time out at 10 s and are replaced by the next ten.
      const sent = new Map<string, number>();
      for (let n = 0; n < 7; n++) {
        const at = Date.now();
        const res = await call('POST', `/v1/webhook-endpoints/${healthyId}/test`, { headers: bAdmin });
        if (res.status === 202) sent.set(String(res.body?.data?.id), at);
        await pause(2_000);
      }
      await waitUntil(
        "workspace B's test events at its receiver",
        async () => [...sent.keys()].every((id) => healthy.received.has(id)),
        60_000,
      ).catch(() => undefined);
      sampling = false;
      await sampler;
      const waits = [...sent].map(([id, at]) => (healthy.received.get(id)?.at ?? Number.POSITIVE_INFINITY) - at);
      const timedOut = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM webhook_attempts a JOIN webhook_deliveries d ON d.id = a.delivery_id
         WHERE d.endpoint_id = ANY($1::bigint[])`,
        [hangingIds],
      );
      report.figure(
        "workspace B's events, sent every 2 s while A's hang",
        `${waits.length} reached the receiver after ${waits.map((w) => `${(w / 1000).toFixed(2)} s`).join(', ')}; meanwhile ${timedOut.rows[0]!.n} of A's attempts timed out, A held at most ${hang.maxHanging()} requests open`,
      );
      report.check(
        "a workspace whose receivers all hang does not delay another's events by one attempt's time (10 s)",
        sent.size === 7 && waits.every((w) => w < ATTEMPT_MS),
        `${sent.size} of 7 tests queued, slowest ${(Math.max(...waits) / 1000).toFixed(2)} s`,
      );
      // The receiver's own count of open requests overlaps for an instant at each timeout (the
      // next attempt arrives before it sees the aborted one close), so the queue is the judge.
      report.check(
        'the hanging workspace held at most half the slots',
        maxActive === WORKSPACE_JOBS,
        `at most ${maxActive} of its ${MAX_ENDPOINTS} endpoints' jobs active at once (sampled every 200 ms; half of ${WORKSPACE_JOBS * 2}); the receiver saw requests to at most ${hang.maxHangingEndpoints()} endpoints open at once`,
      );

      // A third workspace spends its test/redeliver budget; B's is its own.
      const cId = await workspace('Test spammer');
      const cAdmin = await adminKey(cId);
      const cEndpoint = Number((await endpoint(cAdmin, `${healthy.url}/c`)).body?.data?.id);
      let limited: Answer | undefined;
      let accepted = 0;
      for (let n = 0; n < 61 && !limited; n++) {
        const res = await call('POST', `/v1/webhook-endpoints/${cEndpoint}/test`, { headers: cAdmin });
        if (res.status === 202) accepted++;
        else limited = res;
      }
      const bStill = await call('POST', `/v1/webhook-endpoints/${healthyId}/test`, { headers: bAdmin });
      report.check(
        'test/redeliver is rate-limited per workspace: 429 rate_limited with retry-after, another workspace unaffected',
        limited?.status === 429 &&
          limited.body?.error?.code === 'rate_limited' &&
          Number(limited.headers.get('retry-after')) > 0 &&
          bStill.status === 202,
        `${accepted} tests accepted, then ${limited?.status} ${limited?.body?.error?.code} retry-after ${limited?.headers.get('retry-after')}; workspace B's next test ${bStill.status}`,
      );

      // ---------------------------------------------------------------- (b) sealed values from elsewhere
      const sealedEndpoint = await endpoint(bAdmin, `${healthy.url}/sealed`);
      const sealedId = Number(sealedEndpoint.body?.data?.id);
      await db.query('UPDATE webhook_endpoints SET secret_sealed = $1 WHERE id = $2', [
        sealSecret(FOREIGN_KEY, sealedId, 'whsec_of_another_deployment'),
        sealedId,
      ]);
      const sealedTest = await call('POST', `/v1/webhook-endpoints/${sealedId}/test`, { headers: bAdmin });
      const sealedDelivery = Number(sealedTest.body?.data?.id);
      const delivery = await waitUntil(
        'the delivery with an unopenable secret to settle',
        async () => {
          const { rows } = await db.query<{ status: string; error: string | null }>(
            `SELECT d.status, (SELECT a.error FROM webhook_attempts a WHERE a.delivery_id = d.id ORDER BY a.id DESC LIMIT 1) AS error
             FROM webhook_deliveries d WHERE d.id = $1`,
            [sealedDelivery],
          );
          return rows[0]?.status !== 'pending' && rows[0];
        },
        30_000,
      ).catch(() => undefined);
      const shown = await call('GET', `/v1/webhook-endpoints/${sealedId}`, { headers: bAdmin });
      report.check(
        "an endpoint secret sealed under another deployment's key fails its delivery with the reason and disables the endpoint",
        delivery?.status === 'failed' &&
          delivery.error === `not sent: ${SECRET_REASON}` &&
          shown.body?.data?.enabled === false &&
          shown.body.data.disabledReason === SECRET_REASON &&
          ![...healthy.received.values()].some((r) => r.path === '/sealed'),
        `delivery ${delivery?.status ?? 'still pending'} (${delivery?.error ?? 'no attempt'}); endpoint enabled ${String(shown.body?.data?.enabled)}, disabledReason "${String(shown.body?.data?.disabledReason)}"`,
      );

      const inboundMail = readFileSync(path.join(ROOT, 'test/fixtures/webhooks/email/inbound.json'), 'utf8');
      /** An e-mail connection of workspace A, an inbound mail to it, and an agent's reply; resolves with the settled reply. */
      const replyByEmail = async (address: string, smtpUrl: string, alter?: (connectionId: number) => Promise<unknown>) => {
        const created = await call('POST', `/v1/engage/workspaces/${a.workspaceId}/connections`, {
          headers: admin,
          json: { integrationKey: 'email', externalAccountId: address, name: address, credentials: { smtpUrl } },
        });
        if (created.status !== 201) throw new Error(`email connection: ${created.status} ${JSON.stringify(created.body)}`);
        await alter?.(Number(created.body?.data?.id));
        const payload = JSON.parse(inboundMail) as { events: { to: string; messageId: string }[] };
        payload.events[0]!.to = address;
        payload.events[0]!.messageId = `<${randomBytes(6).toString('hex')}.${address}>`;
        const inbound = await call('POST', '/webhooks/email', { headers: { 'x-vendor-auth': EMAIL_SECRET }, json: payload });
        if (inbound.status !== 200) throw new Error(`inbound mail: ${inbound.status}`);
        const thread = await waitUntil(
          'the inbound mail',
          async () =>
            (await db.query<{ thread_id: number }>('SELECT thread_id FROM messages WHERE external_id = $1', [payload.events[0]!.messageId]))
              .rows[0]?.thread_id,
          30_000,
        );
        const reply = await call('POST', `/v1/threads/${thread}/messages`, { headers: { 'x-api-key': a.apiKey }, json: { text: 'hello' } });
        if (reply.status !== 202) throw new Error(`reply: ${reply.status} ${JSON.stringify(reply.body)}`);
        return waitUntil(
          'the reply to settle',
          async () =>
            (
              await db.query<{ status: string; error: string | null }>(
                `SELECT status, error FROM messages WHERE id = $1 AND status <> 'queued'`,
                [reply.body?.data?.id],
              )
            ).rows[0],
          30_000,
        );
      };
      const sealedReply = await replyByEmail('sealed@acme.test', 'smtp://u:p@mail.example.org', (id) =>
        db.query('UPDATE connections SET credentials_sealed = $1 WHERE id = $2', [
          sealCredentials(FOREIGN_KEY, id, { smtpUrl: 'smtp://them:secret@mail.example.org' }),
          id,
        ]),
      );
      report.check(
        "connection credentials sealed under another deployment's key fail the reply with a clear error",
        sealedReply.status === 'failed' && sealedReply.error === CREDENTIALS_DO_NOT_OPEN,
        `${sealedReply.status}: ${sealedReply.error}`,
      );
      const ready = await call('GET', '/readyz');
      const stillIngesting = await ingest();
      const crashed = service.child.exitCode !== null || service.child.signalCode !== null;
      const unhandled = service.output().includes('unhandled promise rejection');
      report.check(
        'after both, the process keeps serving',
        !crashed && !unhandled && ready.status === 200 && stillIngesting === 200,
        `process ${crashed ? 'exited' : 'alive'}, ${unhandled ? 'an unhandled rejection was logged' : 'no unhandled rejection logged'}, /readyz ${ready.status}, a signed delivery answered ${stillIngesting}`,
      );

      // ---------------------------------------------------------------- (c) visitor sockets
      const widget = await call('POST', `/v1/engage/workspaces/${a.workspaceId}/connections`, {
        headers: admin,
        json: { integrationKey: 'livechat', name: 'Website chat' },
      });
      const shop = await call('POST', `/v1/engage/workspaces/${a.workspaceId}/connections`, {
        headers: admin,
        json: { integrationKey: 'livechat', name: 'Shop chat', allowedOrigins: ['https://shop.example'] },
      });
      const socketUrl = async (key: string) => {
        const started = await call('POST', `/v1/livechat/${key}/conversations`, { json: {} });
        const token = String(started.body?.data?.visitorToken);
        return `${service.url.replace('http', 'ws')}/v1/livechat/${key}/socket?visitorToken=${encodeURIComponent(token)}`;
      };
      const widgetKey = String(widget.body?.data?.externalAccountId);
      const visitor = await socketUrl(widgetKey);
      const sockets: WebSocket[] = [];
      try {
        const admitted: (number | 'admitted')[] = [];
        for (let n = 0; n < SOCKETS_PER_ADDRESS; n++) {
          const s = await visitorSocket(visitor, '127.0.0.2');
          sockets.push(s.ws);
          admitted.push(s.outcome);
        }
        const beyond = await visitorSocket(visitor, '127.0.0.2');
        const elsewhere = await visitorSocket(visitor, '127.0.0.3');
        sockets.push(beyond.ws, elsewhere.ws);
        report.check(
          `visitor sockets beyond ${SOCKETS_PER_ADDRESS} from one address are closed 4008; another address still connects`,
          admitted.every((o) => o === 'admitted') && beyond.outcome === 4008 && elsewhere.outcome === 'admitted',
          `from 127.0.0.2: ${admitted.join(', ')}, then ${beyond.outcome}; from 127.0.0.3: ${elsewhere.outcome}`,
        );
        const shopSocket = await socketUrl(String(shop.body?.data?.externalAccountId));
        const noOrigin = await upgradeStatus(shopSocket);
        const foreign = await upgradeStatus(shopSocket, { origin: 'https://evil.example' });
        const allowed = await upgradeStatus(shopSocket, { origin: 'https://shop.example' });
        report.check(
          'a widget with allowedOrigins refuses a socket without an allowed Origin (403 before the upgrade)',
          noOrigin === 403 && foreign === 403 && allowed === 101,
          `no Origin ${noOrigin}, https://evil.example ${foreign}, https://shop.example ${allowed}`,
        );
      } finally {
        for (const s of sockets) s.terminate();
      }

      // ---------------------------------------------------------------- (d) smtpUrl on loopback
      const scan = await replyByEmail('scan@acme.test', `smtp://127.0.0.1:${listener.port}`);
      report.check(
        'a reply through an smtpUrl naming 127.0.0.1 fails at the address guard, never connects, echoes no banner',
        scan.status === 'failed' &&
          scan.error === 'email: refused: 127.0.0.1 is a loopback address; SMTP servers must be on public addresses' &&
          !scan.error.includes(BANNER.slice(0, 5)) &&
          listener.accepted() === 0,
        `${scan.status}: "${scan.error}"; the loopback listener accepted ${listener.accepted()} connections`,
      );

      // ---------------------------------------------------------------- operator surfaces
      const bare = await call('GET', '/metrics');
      const scraped = await call('GET', '/metrics', { headers: { authorization: `Bearer ${metricsToken}` } });
      const email = `operator-${randomBytes(4).toString('hex')}@faults.test`;
      const password = randomBytes(12).toString('hex');
      await call('POST', `/v1/engage/workspaces/${a.workspaceId}/users`, {
        headers: admin,
        json: { name: 'Operator', email, password, roles: ['operator'] },
      });
      const login = await call('POST', '/api/user/login', { json: { email, password } });
      const jwt = String((login.body as { access_token?: string } | null)?.access_token);
      const pat = await call('POST', '/v1/personal-access-tokens', { headers: { authorization: `Bearer ${jwt}` }, json: { name: 'ci' } });
      const byPat = await call('GET', '/v1/operator/tenants', { headers: { authorization: `Bearer ${String(pat.body?.data?.token)}` } });
      const byJwt = await call('GET', '/v1/operator/tenants', { headers: { authorization: `Bearer ${jwt}` } });
      report.check(
        '/metrics asks for its token; operator routes refuse a personal-access token',
        bare.status === 401 && scraped.status === 200 && pat.status === 201 && byPat.status === 401 && byJwt.status === 200,
        `/metrics without the token ${bare.status}, with it ${scraped.status}; an operator's PAT (${pat.status}) on /v1/operator/tenants ${byPat.status}, their JWT ${byJwt.status}`,
      );
    } finally {
      // The hanging requests are cut first, so the service's shutdown does not wait out their deadline.
      await hang.close();
      await svc?.stop();
      await Promise.all([healthy.close(), listener.close(), db.end()]);
    }
  },
};
