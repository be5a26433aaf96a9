// Part 4b: a worker killed while it sends webhooks. One role-all process turns a steady trickle of
// signed deliveries into message.created events for an endpoint on 127.0.0.1 that answers each
// after 2 s, so that its job takes in what queues behind it and runs long. The worker process
// (role all's child) is SIGKILLed mid-job, and the parent starts a new one. The deliveries the
// killed job held must reach the receiver again within the bound, ahead of the endpoint's
// deliveries made after the kill (which, run first, would hold the endpoint for as long as the
// receiver takes over them: up to a minute).
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { freshDatabase } from '../../harness/checks.js';
import { ingestLoad } from '../../harness/load.js';
import { ADMIN_KEY, pause, provisionTenant, startService, waitUntil } from '../../harness/service.js';
import { freePort } from '../../src/db/embedded.js';
import type { FaultPart } from './part.js';

/** How long the receiver takes over each answer: a receiver slow enough for a job to run long. */
const ANSWER_MS = 2_000;

/** A receiver that answers 204 after ANSWER_MS and records when each delivery id arrived. */
async function slowReceiver() {
  const arrivals = new Map<number, number[]>();
  const server = createServer((req, res) => {
    req.resume().on('end', () => {
      const id = Number(req.headers['x-service-delivery']);
      arrivals.set(id, [...(arrivals.get(id) ?? []), Date.now()]);
      setTimeout(() => res.writeHead(204).end(), ANSWER_MS);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    arrivals,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

export const outboundKillPart: FaultPart = {
  key: 'outbound-kill',
  title: '4b. a worker killed while it sends webhooks',
  async run({ postgres, fake, options }, report) {
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_outbound_kill');
    const db = new pg.Pool({ connectionString: url, max: 3 });
    const receiver = await slowReceiver();
    const svc = await startService({
      role: 'all',
      databaseUrl: url,
      port: await freePort(),
      whatsappApiBaseUrl: fake.baseUrls.whatsapp,
      env: { INBOX_ALLOW_PRIVATE_WEBHOOK_URLS: 'true' },
    });
    try {
      const tenant = await provisionTenant(svc.url, 'Outbound kill');
      const admin = await fetch(`${svc.url}/v1/engage/workspaces/${tenant.workspaceId}/api-keys`, {
        method: 'POST',
        headers: { 'x-service-admin-api-key': ADMIN_KEY, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'endpoints', scopes: ['admin'] }),
      }).then((r) => r.json() as Promise<{ data: { key: string } }>);
      await fetch(`${svc.url}/v1/webhook-endpoints`, {
        method: 'POST',
        headers: { 'x-api-key': admin.data.key, 'content-type': 'application/json' },
        body: JSON.stringify({ url: receiver.url, events: ['message.created'] }),
      });
      const workerPid = () => Number(/"workerPid":(\d+)[^\n]*"msg":"inbox is running"/.exec(svc.output())?.[1]);
      report.did(
        `role all, one endpoint for message.created answering each delivery after ${ANSWER_MS / 1000} s; 4 signed deliveries a second for ${options.seconds} s`,
      );
      const load = ingestLoad([svc.url], { connections: 2, rate: 4 });
      // Until the endpoint's job has taken in what queued behind it and holds a handful.
      const held = await waitUntil(
        'an outbound job holding deliveries',
        async () => {
          const { rows } = await db.query<{ id: string; ids: number[] }>(
            `SELECT id, (SELECT array_agg(x::bigint) FROM jsonb_array_elements_text(data->'deliveryIds') x) AS ids
             FROM pgboss.job WHERE name = 'outbound-webhook' AND state = 'active'`,
          );
          return rows.find((r) => (r.ids ?? []).length >= 10);
        },
        60_000,
        200,
      );
      // What the job still owes: its deliveries not yet recorded as answered.
      const { rows: owed } = await db.query<{ id: number }>(
        `SELECT id FROM webhook_deliveries WHERE job_id = $1 AND status = 'pending' AND id = ANY($2::bigint[])`,
        [held.id, held.ids],
      );
      const pid = workerPid();
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      report.did(
        `SIGKILL of the worker process (pid ${pid}) while its job held ${held.ids.length} deliveries, ${owed.length} not yet recorded`,
      );
      await pause((options.seconds * 1000) / 2);
      await load.stop();
      const owedIds = owed.map((r) => Number(r.id));
      await waitUntil(
        "the killed job's deliveries to arrive again",
        async () => owedIds.every((id) => (receiver.arrivals.get(id) ?? []).some((at) => at > killedAt)),
        300_000,
        250,
      );
      const back = owedIds.map((id) => receiver.arrivals.get(id)!.find((at) => at > killedAt)! - killedAt).sort((a, b) => a - b);
      const { rows: newer } = await db.query<{ id: number }>(
        `SELECT id FROM webhook_deliveries WHERE created_at > to_timestamp($1 / 1000.0)`,
        [killedAt],
      );
      const lastBack = back.at(-1)!;
      const newerAt = newer.flatMap((r) => receiver.arrivals.get(Number(r.id)) ?? []).map((at) => at - killedAt);
      // Once the killed job is handed out again it sends its own first and takes in the newer ones
      // after: any newer delivery that arrived before its first is one its endpoint sent ahead of it.
      const ahead = newer.filter((r) => (receiver.arrivals.get(Number(r.id)) ?? []).some((at) => at - killedAt < back[0]!)).length;
      report.figure(
        "the killed job's deliveries arrived again",
        `${owedIds.length}: first ${seconds(back[0]!)}, median ${seconds(back[Math.floor(back.length / 2)]!)}, last ${seconds(lastBack)} after the kill; of the ${newer.length} deliveries made after the kill the first arrived at ${seconds(Math.min(...newerAt))}, ${ahead} before the killed job's first`,
      );
      report.check("no delivery made after the kill went out ahead of the killed job's", ahead === 0, `${ahead} of ${newer.length} ahead`);
      report.check(
        `the killed job's deliveries came back within ${options.resumeBoundSeconds} s of the kill`,
        lastBack <= options.resumeBoundSeconds * 1000,
        seconds(lastBack),
      );
    } finally {
      await svc.stop();
      await receiver.close();
      await db.end();
    }
  },
};
