// Part 3: two `--role api` and two `--role worker` processes on one database, deliveries and
// replies through both apis, a realtime socket on each.
import pg from 'pg';
import { checkExactlyOnce, checkReplies, drained, freshDatabase } from '../../harness/checks.js';
import { ingestLoad, listen, replyTraffic, seedThreads } from '../../harness/load.js';
import { one, pause, provisionTenant, type Service, startService, waitUntil } from '../../harness/service.js';
import type { FaultPart } from './part.js';

export const scaleOutPart: FaultPart = {
  key: 'scale',
  title: '3. scale-out: 2 api + 2 worker processes on one database',
  async run({ postgres, fake, options }, report) {
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_scale');
    const db = new pg.Pool({ connectionString: url, max: 3 });
    const services: Service[] = [];
    try {
      const start = (role: 'api' | 'worker') => startService({ role, databaseUrl: url, whatsappApiBaseUrl: fake.baseUrls.whatsapp });
      // The first one migrates; the other three start together on the migrated database.
      services.push(await start('api'));
      services.push(...(await Promise.all([start('api'), start('worker'), start('worker')])));
      const apis = services.filter((s) => s.role === 'api').map((s) => s.url);
      const tenant = await provisionTenant(apis[0]!);
      const threadIds = await seedThreads(apis[1]!, db, 50);
      const sockets = await Promise.all(apis.map((api) => listen(api, tenant.accessToken)));
      const before = await one<{ id: number }>(db, 'SELECT coalesce(max(id), 0)::int AS id FROM messages');
      report.did(
        `2 api and 2 worker processes; ${options.connections} connections of deliveries and 4 replying agents across both apis, for ${options.seconds} s; a realtime socket on each api`,
      );
      const load = ingestLoad(apis, { connections: options.connections });
      const replies = replyTraffic(apis, tenant, threadIds, { concurrency: 4, pauseMs: 20 });
      await pause(options.seconds * 1000);
      const result = await load.stop();
      await replies.stop();
      const codes = [...load.statuses].map(([k, n]) => `${k} ${n}`).join(', ');
      report.did(`load stopped: ${load.acknowledged.size} deliveries acknowledged (${codes}); ${replies.accepted.size} replies accepted`);
      report.figure('ingest across 2 apis', `${Math.round(result.requests.average)} req/s, p99 ${result.latency.p99} ms`);
      const seconds = await drained(db, 180_000);
      report.figure('backlog drained by 2 workers', `${seconds.toFixed(1)} s after the load stopped`);
      await checkExactlyOnce(report, db, load.acknowledged);
      const twice = await one<{ n: number }>(db, `SELECT count(*)::int AS n FROM webhook_inbox WHERE attempt_count <> 1`);
      report.check('no delivery processed twice', twice.n === 0, `${twice.n} inbox rows with more than one attempt`);
      await checkReplies(report, db, replies.accepted, fake.sentAt);
      const created = (
        await db.query<{ id: number }>(`SELECT id::int AS id FROM messages WHERE id > $1 AND direction = 'inbound'`, [before.id])
      ).rows.map((r) => r.id);
      const missing = (s: { created: Set<number> }) => created.filter((id) => !s.created.has(id)).length;
      await waitUntil('every message.created on both sockets', async () => sockets.every((s) => missing(s) === 0), 30_000).catch(() => {});
      report.check(
        'realtime events reach sockets on both api processes',
        sockets.every((s) => missing(s) === 0),
        sockets
          .map((s, i) => `api ${i + 1}: ${created.length - missing(s)} of ${created.length} message.created (${s.events} events in all)`)
          .join('; '),
      );
      for (const s of sockets) s.close();
    } finally {
      for (const s of services) await s.stop();
      await db.end();
    }
  },
};
