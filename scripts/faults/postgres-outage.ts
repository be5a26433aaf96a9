// Part 2: PostgreSQL stops (fast shutdown: every connection ended) under load and comes back
// on the same port. The service is never restarted: it must answer 503 while the database is
// away and recover by itself.
import pg from 'pg';
import { checkExactlyOnce, drained, freshDatabase } from '../../harness/checks.js';
import { ingestLoad, probe, trackedSenders } from '../../harness/load.js';
import { pause, provisionTenant, startService, waitUntil } from '../../harness/service.js';
import type { FaultPart } from './part.js';

const OUTAGE_MS = 10_000;

export const outagePart: FaultPart = {
  key: 'postgres',
  title: '2. PostgreSQL stops and comes back under load',
  async run({ postgres, fake, options }, report) {
    const url = await freshDatabase(postgres.pool, postgres.url, 'faults_outage');
    const svc = await startService({ role: 'all', databaseUrl: url, whatsappApiBaseUrl: fake.baseUrls.whatsapp });
    let db: pg.Pool | undefined;
    try {
      await provisionTenant(svc.url);
      // down: the server is gone; starting: it is asked to start again (it may accept from then
      // on, before start() returns); up: start() returned.
      const outage = { down: 0, starting: 0, up: 0 };
      const during = new Map<number | 'error', number>();
      let firstAcceptedAfter = 0;
      const load = ingestLoad([svc.url], {
        connections: options.connections,
        onAnswer: (status, at) => {
          if (outage.down && at > outage.down && !outage.up) during.set(status, (during.get(status) ?? 0) + 1);
          if (outage.up && at > outage.up && status === 200 && !firstAcceptedAfter) firstAcceptedAfter = at;
        },
      });
      const loadStarted = Date.now();
      const tracked = trackedSenders(svc.url, 10);
      const ready = probe(svc.url, '/readyz');
      report.did(
        `role all under ${options.connections} connections of signed deliveries (and 10 more senders timing each request); /readyz probed every 200 ms`,
      );
      await pause((options.seconds * 1000) / 3);
      const stopping = Date.now();
      await postgres.stop();
      // From here until it is back nothing can commit: a 200 in this window would be a lie.
      outage.down = Date.now();
      report.did(
        `PostgreSQL stopped (fast shutdown, ${((outage.down - stopping) / 1000).toFixed(1)} s) and kept away for ${OUTAGE_MS / 1000} s`,
      );
      await pause(OUTAGE_MS);
      outage.starting = Date.now();
      await postgres.start();
      outage.up = Date.now();
      report.did('PostgreSQL started again on the same port; the service was left alone');
      await waitUntil('the first delivery accepted after the outage', async () => firstAcceptedAfter, 60_000).catch((err: Error) => {
        const tail = ready.answers
          .slice(-5)
          .map((a) => `${((a.at - outage.up) / 1000).toFixed(1)} s: ${a.status}`)
          .join(', ');
        const codes = [...load.statuses].map(([k, n]) => `${k} ${n}`).join(', ');
        throw new Error(`${err.message}\n/readyz: ${tail}\nanswers so far: ${codes}\nservice log:\n${svc.output().slice(-3000)}`);
      });
      await pause((options.seconds * 1000) / 3);
      const result = await load.stop();
      await tracked.stop();
      ready.stop();
      const codes = [...load.statuses].map(([k, n]) => `${k} ${n}`).join(', ');
      report.did(
        `load stopped: ${load.acknowledged.size + tracked.acknowledged.size} deliveries acknowledged (${codes}, and ${tracked.requests.length} timed requests)`,
      );

      // A request in flight when the stop began may have committed before the server went down
      // and be answered 200 a moment later (it is stored: the exactly-once check below counts
      // it); what must never happen is a 200 for a request that was sent once PostgreSQL was
      // already gone. The timed senders know when each request was sent.
      const inOutage = [...during].map(([k, n]) => `${k} ${n}`).join(', ') || 'none';
      // Answered before the server was even asked to start again: nothing could have committed.
      const sentWhileAway = tracked.requests.filter((r) => r.at > outage.down && r.at + r.ms < outage.starting);
      const liedTo = sentWhileAway.filter((r) => r.status === 200).length;
      report.check(
        'no delivery sent while PostgreSQL was away was acknowledged',
        sentWhileAway.length > 0 && liedTo === 0,
        `${sentWhileAway.length} timed requests sent and answered during the outage, ${liedTo} answered 200; all answers received during it: ${inOutage}`,
      );
      const readyDuring = ready.answers.filter((a) => a.at > outage.down + 1000 && a.at + 3000 < outage.up);
      const notReady = readyDuring.filter((a) => a.status === 503).length;
      report.check(
        '/readyz answered 503 during the outage',
        readyDuring.length > 0 && notReady === readyDuring.length,
        `${notReady} of ${readyDuring.length} probes answered 503 (${
          readyDuring
            .filter((a) => a.status !== 503)
            .map((a) => a.status)
            .join(', ') || 'no others'
        })`,
      );
      const back = ready.answers.find((a) => a.at > outage.up && a.status === 200);
      report.check(
        '/readyz answered 200 again by itself',
        back !== undefined,
        back ? `${((back.at - outage.up) / 1000).toFixed(1)} s after PostgreSQL was back` : 'never',
      );
      report.figure('ingestion resumed', `${((firstAcceptedAfter - outage.up) / 1000).toFixed(1)} s after PostgreSQL was back`);
      const other5xx = [...load.statuses].filter(([k]) => typeof k === 'number' && k >= 500 && k !== 503).reduce((n, [, v]) => n + v, 0);
      report.check('refused with 503 only (no other 5xx)', other5xx === 0, `${other5xx} other 5xx answers`);
      const slowest = [...tracked.requests].sort((a, b) => b.ms - a.ms).slice(0, 3);
      const slow = tracked.requests.filter((r) => r.ms > 10_000);
      report.check(
        'no request hung (10 s)',
        result.timeouts === 0 && slow.length === 0,
        `${result.timeouts} of the load timed out; of ${tracked.requests.length} timed requests the slowest took ${slowest.map((r) => `${(r.ms / 1000).toFixed(1)} s (${r.status}, sent ${((r.at - loadStarted) / 1000).toFixed(1)} s into the load)`).join(', ')}`,
      );

      db = new pg.Pool({ connectionString: url, max: 3 });
      const seconds = await drained(db, 180_000);
      report.figure('backlog drained', `${seconds.toFixed(1)} s after the load stopped`);
      await checkExactlyOnce(report, db, new Set([...load.acknowledged, ...tracked.acknowledged]));
      if (!report.ok) report.did(`the service's log: ${svc.logFile}`);
    } finally {
      await svc.stop();
      await db?.end();
    }
  },
};
