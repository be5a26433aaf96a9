// Phases 1–2: the ceiling and ingestion (POST /webhooks/whatsapp, JSON, then POST
// /webhooks/sms.twilio, form-encoded as Twilio sends it, on a role-api process) alternate for
// --rounds rounds against processes started once, so all see the same machine: drift between
// rounds cancels out of each round's ratios, and the median ratios are reported.

import { WEBHOOK_SECRET } from '../../harness/service.js';
import type { Db } from '../../src/db/database.js';
import { inboxRows, queuedDeliveries } from './bench.queries.js';
import { startCeiling } from './ceiling.js';
import {
  BENCH_PUBLIC_URL,
  BURST_BODIES_PER_SECOND,
  burst,
  type Measured,
  median,
  say,
  serve,
  signedDeliveries,
  TWILIO_AUTH_TOKEN,
  TWILIO_PATH,
  twilioDeliveries,
  WARMUP_SECONDS,
} from './common.js';
import type { BenchOptions } from './options.js';

export async function measureIngest(options: BenchOptions, databaseUrl: string, db: Db) {
  const ceiling = await startCeiling();
  const api = await serve(options, 'api', databaseUrl, {
    env: {
      INBOX_PUBLIC_URL: BENCH_PUBLIC_URL,
      INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: WEBHOOK_SECRET }, 'sms.twilio': { authToken: TWILIO_AUTH_TOKEN } }),
    },
  });
  const twilioBurst = (count: number, duration: number) =>
    burst(api.url, twilioDeliveries(count), { connections: options.connections, duration, path: TWILIO_PATH });
  try {
    // A short unmeasured warm-up of both servers first, so JIT compilation, prepared
    // statements and pool connections are not charged to the first round of either.
    say(`warm-up: ceiling and ingest, ${WARMUP_SECONDS} s each`);
    await ceiling.measure(options.connections, WARMUP_SECONDS);
    const warmup = await burst(api.url, signedDeliveries(BURST_BODIES_PER_SECOND * WARMUP_SECONDS), {
      connections: options.connections,
      duration: WARMUP_SECONDS,
    });
    const twilioWarmup = await twilioBurst(BURST_BODIES_PER_SECOND * WARMUP_SECONDS, WARMUP_SECONDS);
    const rounds: { ceiling: Measured; ingest: Measured; twilio: Measured }[] = [];
    for (let round = 1; round <= options.rounds; round++) {
      say(
        `1-2 round ${round}/${options.rounds}: ceiling, ingest (WhatsApp JSON), ingest (Twilio form), ${options.connections} connections, ${options.seconds} s each`,
      );
      const c = await ceiling.measure(options.connections, options.seconds);
      // Built before the load starts, outside the measured window.
      const bodies = signedDeliveries(BURST_BODIES_PER_SECOND * options.seconds);
      const i = await burst(api.url, bodies, { connections: options.connections, duration: options.seconds });
      const t = await twilioBurst(BURST_BODIES_PER_SECOND * options.seconds, options.seconds);
      say(
        `  ceiling ${Math.round(c.result.requests.average)} req/s (generator ${Math.round(c.generatorCpu * 100)} % of a core), ingest ${Math.round(i.result.requests.average)} req/s (generator ${Math.round(i.generatorCpu * 100)} %), twilio ${Math.round(t.result.requests.average)} req/s (generator ${Math.round(t.generatorCpu * 100)} %)`,
      );
      rounds.push({ ceiling: c, ingest: i, twilio: t });
    }
    await ceiling.stop();
    const rssMb = api.peakRssMb();
    // Stopping the api lets requests still in flight finish, so the counts below are final.
    await api.stop();
    const ingests = [warmup, twilioWarmup, ...rounds.flatMap((r) => [r.ingest, r.twilio])];
    const twilios = [twilioWarmup, ...rounds.map((r) => r.twilio)];
    const ratioOf = (r: { ceiling: Measured }, m: Measured) => m.result.requests.average / r.ceiling.result.requests.average;
    return {
      ceiling: {
        rps: Math.round(median(rounds.map((r) => r.ceiling.result.requests.average))),
        generatorCpu: median(rounds.map((r) => r.ceiling.generatorCpu)),
      },
      ingest: {
        rps: Math.round(median(rounds.map((r) => r.ingest.result.requests.average))),
        p99Ms: median(rounds.map((r) => r.ingest.result.latency.p99)),
        non2xx: ingests.reduce((n, r) => n + r.result.non2xx + r.result.errors + r.result.timeouts, 0),
        acknowledged: ingests.reduce((n, r) => n + r.result['2xx'], 0),
        rows: await inboxRows(db),
        queued: await queuedDeliveries(db),
        generatorCpu: median(rounds.map((r) => r.ingest.generatorCpu)),
        repeated: ingests.reduce((n, r) => n + r.repeated, 0),
      },
      ratio: Number(median(rounds.map((r) => ratioOf(r, r.ingest))).toFixed(3)),
      rounds: rounds.map((r) => Number(ratioOf(r, r.ingest).toFixed(3))),
      /** The same phase for Twilio's form-encoded deliveries (signature over URL + sorted parameters). */
      twilio: {
        rps: Math.round(median(rounds.map((r) => r.twilio.result.requests.average))),
        p99Ms: median(rounds.map((r) => r.twilio.result.latency.p99)),
        non2xx: twilios.reduce((n, r) => n + r.result.non2xx + r.result.errors + r.result.timeouts, 0),
        generatorCpu: median(rounds.map((r) => r.twilio.generatorCpu)),
        ratio: Number(median(rounds.map((r) => ratioOf(r, r.twilio))).toFixed(3)),
        rounds: rounds.map((r) => Number(ratioOf(r, r.twilio).toFixed(3))),
      },
      rssMb,
    };
  } finally {
    await ceiling.stop();
    await api.stop();
  }
}
