// Part 1: one `npm start`-style process (role all) under signed deliveries and replies,
// SIGKILLed mid-load and started again, twice.
import pg from 'pg';
import { checkExactlyOnce, checkReplies, drained, freshDatabase, lastSettled, openWork } from '../../harness/checks.js';
import { ingestLoad, replyTraffic, seedThreads } from '../../harness/load.js';
import { pause, provisionTenant, type Service, startService, waitUntil } from '../../harness/service.js';
import { freePort } from '../../src/db/embedded.js';
import type { FaultPart } from './part.js';

const KILLS = 2;

export const killPart: FaultPart = {
  key: 'kill',
  title: '1. kill -9 under load',
  async run({ postgres, fake, options }, report) {
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_kill');
    const db = new pg.Pool({ connectionString: url, max: 3 });
    const port = await freePort();
    const start = () => startService({ role: 'all', databaseUrl: url, port, whatsappApiBaseUrl: fake.baseUrls.whatsapp });
    let svc: Service = await start();
    try {
      const tenant = await provisionTenant(svc.url);
      const threadIds = await seedThreads(svc.url, db, 50);
      report.did(
        `role all on 127.0.0.1:${port}; ${options.connections} connections of signed WhatsApp deliveries and 4 agents replying, for ${options.seconds} s`,
      );
      const load = ingestLoad([svc.url], { connections: options.connections });
      const replies = replyTraffic([svc.url], tenant, threadIds, { concurrency: 4, pauseMs: 20 });
      const kills: { at: number; ready: number; rows: string[]; replies: number[]; activeJobs: number }[] = [];
      const slice = (options.seconds * 1000) / (KILLS + 1);
      for (let k = 1; k <= KILLS; k++) {
        await pause(slice);
        const open = await openWork(db);
        const at = Date.now();
        await svc.kill9();
        svc = await start();
        const ready = Date.now();
        kills.push({ at, ready, ...open });
        report.did(
          `SIGKILL #${k} with ${open.rows.length} deliveries unprocessed, ${open.replies.length} replies queued, ${open.activeJobs} jobs held; restarted, ready in ${((ready - at) / 1000).toFixed(1)} s`,
        );
      }
      await pause(slice);
      const result = await load.stop();
      await replies.stop();
      const codes = [...load.statuses].map(([k, n]) => `${k} ${n}`).join(', ');
      report.did(
        `load stopped: ${load.acknowledged.size} deliveries acknowledged (${codes}); ${replies.accepted.size} replies accepted, ${replies.refused} refused or cut off`,
      );
      report.figure('ingest under kills', `${Math.round(result.requests.average)} req/s average, p99 ${result.latency.p99} ms`);

      for (const [i, k] of kills.entries()) {
        const last = await waitUntil(
          `the work open at kill #${i + 1} to be settled`,
          () => lastSettled(db, k.rows, k.replies),
          300_000,
          500,
        );
        // The restart is spawned the moment the old process is gone, so this counts the start
        // (slow under a storm of reconnecting senders) and the wait for the held jobs.
        const afterKill = (last - k.at) / 1000;
        report.figure(
          `kill #${i + 1}: work held at the kill settled`,
          `${afterKill.toFixed(1)} s after the kill (the new process was ready after ${((k.ready - k.at) / 1000).toFixed(1)} s)`,
        );
        report.check(
          `kill #${i + 1}: processing resumed within ${options.resumeBoundSeconds} s of the kill and restart`,
          afterKill <= options.resumeBoundSeconds,
          `${afterKill.toFixed(1)} s`,
        );
      }
      await drained(db, 300_000);
      await checkExactlyOnce(report, db, load.acknowledged);
      await checkReplies(
        report,
        db,
        replies.accepted,
        fake.sentAt,
        kills.map((k) => k.at),
      );
    } finally {
      await svc.stop();
      await db.end();
    }
  },
};
