// Part 4: outbound webhooks under faults. One role-all process turns signed deliveries into
// message.created events for a customer endpoint on 127.0.0.1 whose receiver fails (500),
// then hangs past the 10 s deadline, then comes back; the process is SIGKILLed with
// deliveries in flight and started again. Every event must reach the receiver, with the same
// delivery id and the same bytes on every attempt, and every repeat must be explained.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { freshDatabase } from '../../harness/checks.js';
import { ingestLoad } from '../../harness/load.js';
import { ADMIN_KEY, pause, provisionTenant, type Service, startService, waitUntil } from '../../harness/service.js';
import { freePort } from '../../src/db/embedded.js';
import type { FaultPart } from './part.js';

type Mode = 'fail' | 'hang' | 'ok';

interface Receipt {
  at: number;
  body: string;
  answered: number | 'hung';
}

/** The customer's receiver: verifies every signature over the raw bytes, answers as `mode` says. */
async function startReceiver(secret: () => string) {
  let mode: Mode = 'ok';
  const byDelivery = new Map<string, Receipt[]>();
  let forged = 0;
  const hanging = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req
      .on('data', (c: Buffer) => chunks.push(c))
      .on('end', () => {
        const raw = Buffer.concat(chunks);
        const ts = String(req.headers['x-service-timestamp'] ?? '');
        const expected = Buffer.from(`sha256=${createHmac('sha256', secret()).update(`${ts}.`).update(raw).digest('hex')}`);
        const signed = String(req.headers['x-service-signature'] ?? '')
          .split(' ')
          .some((s) => s.length === expected.length && timingSafeEqual(Buffer.from(s), expected));
        if (!signed) {
          forged++;
          res.writeHead(401).end();
          return;
        }
        const id = String(req.headers['x-service-delivery']);
        const receipt: Receipt = {
          at: Date.now(),
          body: raw.toString('utf8'),
          answered: mode === 'ok' ? 204 : mode === 'fail' ? 500 : 'hung',
        };
        byDelivery.set(id, [...(byDelivery.get(id) ?? []), receipt]);
        if (mode === 'hang') {
          hanging.add(res);
          return;
        }
        res.writeHead(receipt.answered as number).end();
      });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    byDelivery,
    forged: () => forged,
    set(m: Mode) {
      mode = m;
      if (m !== 'hang') for (const res of hanging) res.destroy();
      hanging.clear();
    },
    close: () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export const outboundPart: FaultPart = {
  key: 'outbound',
  title: '4. outbound webhooks under faults',
  async run({ postgres, fake, options }, report) {
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_outbound');
    const db = new pg.Pool({ connectionString: url, max: 3 });
    const port = await freePort();
    const start = () =>
      startService({
        role: 'all',
        databaseUrl: url,
        port,
        whatsappApiBaseUrl: fake.baseUrls.whatsapp,
        env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' },
      });
    let svc: Service = await start();
    let secret = '';
    const receiver = await startReceiver(() => secret);
    try {
      const tenant = await provisionTenant(svc.url, 'Outbound faults');
      const admin = await fetch(`${svc.url}/v1/engage/workspaces/${tenant.workspaceId}/api-keys`, {
        method: 'POST',
        headers: { 'x-service-admin-api-key': ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'endpoints', scopes: ['admin'] }),
      }).then((r) => r.json() as Promise<{ data: { key: string } }>);
      const endpoint = await fetch(`${svc.url}/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { 'x-api-key': admin.data.key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, events: ['message.created'] }),
      }).then((r) => r.json() as Promise<{ data: { id: number; secret: string } }>);
      secret = endpoint.data.secret;
      const phase = (options.seconds * 1000) / 4;
      report.did(
        `role all on 127.0.0.1:${port}, one endpoint for message.created; 50 connections of signed deliveries for ${options.seconds} s while the receiver answers 500, then hangs past 10 s, then answers 204`,
      );
      const load = ingestLoad([svc.url], { connections: 50 });
      receiver.set('fail');
      await pause(phase);
      receiver.set('hang');
      await pause(phase);
      receiver.set('ok');
      await pause(phase / 2);
      const inFlight = await db.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pgboss.job WHERE name = 'outbound-webhook' AND state = 'active'`,
      );
      const killedAt = Date.now();
      await svc.kill9();
      // The old process may still answer and be answered until it is gone: that instant, not
      // the signal's, divides the two lives.
      const diedAt = Date.now();
      svc = await start();
      const restartedAt = Date.now();
      report.did(
        `SIGKILL with ${inFlight.rows[0]!.n} outbound jobs active; restarted, ready in ${((restartedAt - killedAt) / 1000).toFixed(1)} s`,
      );
      await pause(phase / 2);
      const result = await load.stop();
      report.did(`load stopped: ${load.acknowledged.size} deliveries acknowledged (${Math.round(result.requests.average)} req/s)`);

      // Failed attempts are retried after 60 s, 5 min, 15 min…: instead of waiting out the contract
      // §8.2's schedule, the suite moves every scheduled attempt to now until all have succeeded.
      const settleStarted = Date.now();
      await waitUntil(
        'every outbound delivery to succeed',
        async () => {
          await db.query(
            `UPDATE pgboss.job SET start_after = now() WHERE name = 'outbound-webhook' AND state IN ('created', 'retry') AND start_after > now()`,
          );
          const { rows } = await db.query<{ pending: number; failed: number; messages: number; events: number }>(`
          SELECT (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'pending') AS pending,
                 (SELECT count(*)::int FROM webhook_deliveries WHERE status = 'failed') AS failed,
                 (SELECT count(*)::int FROM messages WHERE direction = 'inbound') AS messages,
                 -- The event log keeps every event (thread.created, thread.updated, …), endpoint or
                 -- not (docs/outbound-webhooks.md, "Event log"): the endpoint takes message.created.
                 (SELECT count(*)::int FROM webhook_events WHERE type = 'message.created') AS events`);
          const r = rows[0]!;
          return r.pending === 0 && r.messages === r.events && r.messages >= load.acknowledged.size && r;
        },
        600_000,
        2_000,
      );
      report.figure('settled after the load', `${((Date.now() - settleStarted) / 1000).toFixed(1)} s (scheduled retries moved forward)`);

      const { rows: deliveries } = await db.query<{ id: number; status: string; attempts: number; event_id: string; data_id: number }>(`
        SELECT d.id, d.status, (SELECT count(*)::int FROM webhook_attempts a WHERE a.delivery_id = d.id) AS attempts, ev.id AS event_id,
               (ev.body::jsonb -> 'data' ->> 'id')::bigint AS data_id
        FROM webhook_deliveries d JOIN webhook_events ev ON ev.id = d.event_id`);
      const { rows: messages } = await db.query<{ id: number }>(`SELECT id FROM messages WHERE direction = 'inbound'`);
      const messageIds = new Set(messages.map((m) => Number(m.id)));
      const failedDeliveries = deliveries.filter((d) => d.status !== 'succeeded');
      report.check(
        'every acknowledged delivery made one message and one message.created event',
        messageIds.size >= load.acknowledged.size &&
          deliveries.length === messageIds.size &&
          new Set(deliveries.map((d) => Number(d.data_id))).size === messageIds.size,
        `${load.acknowledged.size} acknowledged, ${messageIds.size} messages, ${deliveries.length} events`,
      );
      report.check(
        'every event reached the receiver and was answered 2xx',
        failedDeliveries.length === 0 &&
          deliveries.every((d) => (receiver.byDelivery.get(String(d.id)) ?? []).some((r) => r.answered === 204)),
        `${deliveries.length - failedDeliveries.length} of ${deliveries.length} succeeded`,
      );
      let sameBytes = true;
      let unexplained = 0;
      const why: string[] = [];
      let repeats = 0;
      let retried = 0;
      const known = new Set(deliveries.map((d) => String(d.id)));
      for (const [id, receipts] of receiver.byDelivery) {
        if (!known.has(id)) unexplained++;
        if (receipts.some((r) => r.body !== receipts[0]!.body)) sameBytes = false;
        if (receipts.length > 1) retried++;
        const accepted = receipts.filter((r) => r.answered === 204);
        if (accepted.length > 1) {
          repeats += accepted.length - 1;
          // A second 2xx is explained only by the kill: accepted by the old process, sent again by the new one.
          if (!(accepted[0]!.at <= diedAt && accepted.at(-1)!.at >= diedAt)) {
            unexplained++;
            const { rows: tried } = await db.query<{ attempted_at: Date; status_code: number | null; error: string | null }>(
              'SELECT attempted_at, status_code, error FROM webhook_attempts WHERE delivery_id = $1 ORDER BY id',
              [Number(id)],
            );
            why.push(
              `delivery ${id} accepted at ${accepted.map((r) => `${((r.at - killedAt) / 1000).toFixed(1)} s`).join(', ')} from the kill; attempts recorded: ${tried.map((t) => `${((t.attempted_at.getTime() - killedAt) / 1000).toFixed(1)} s ${t.status_code ?? t.error}`).join('; ')}`,
            );
          }
        }
        const event = JSON.parse(receipts[0]!.body) as { type: string; data: { id: number } };
        if (event.type !== 'message.created' || !messageIds.has(event.data.id)) unexplained++;
      }
      report.figure(
        'receiver',
        `${receiver.byDelivery.size} delivery ids, ${retried} received more than once (failed, timed out or cut off by the kill), ${repeats} accepted twice, ${receiver.forged()} unsigned`,
      );
      report.check(
        'every attempt of a delivery carried the same delivery id and the same bytes',
        sameBytes,
        sameBytes ? 'identical bodies per delivery id' : 'a delivery id arrived with different bodies',
      );
      report.check(
        'the receiver saw nothing it cannot explain',
        unexplained === 0 && receiver.forged() === 0,
        `${unexplained} unexplained receipts (unknown delivery, foreign event, or accepted twice outside the kill), ${receiver.forged()} bad signatures${why.length ? `: ${why.slice(0, 5).join(' | ')}` : ''}`,
      );
    } finally {
      await svc.stop();
      await receiver.close();
      await db.end();
    }
  },
};
