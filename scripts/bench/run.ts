// `npm run bench [-- --help]`: measures, in one run on one machine, side by side (one module per phase):
//   1. ceiling.ts: a no-op Fastify route that reads the raw body and checks the same HMAC, as
//      plain JavaScript in its own process;
//   2. ingest.ts:  POST /webhooks/whatsapp on the real service (role api), signed ~1.5 KB bodies,
//      then POST /webhooks/sms.twilio with Twilio-signed form bodies of the same size;
//      1 and 2 alternate for --rounds rounds and the median of the per-round ratios is reported;
//   3. process.ts: --workers worker processes drain everything phase 2 stored;
//   4. latency.ts: role all under a steady --rate deliveries/s, median received → processed;
//   5. send.ts:    reply POSTs, then --sends queued replies sent through a loopback fake provider;
//   6. outbound.ts: --outbound webhook deliveries to one endpoint, then four, then 200 events/s,
//      then a slow receiver fed one event per commit;
//   or single.ts (--single): one role-all process as `npm start` runs it, burst and sustained;
//   or conversations.ts (--conversations): thread filters and message search on a large inbox;
//   or reports.ts (--reports): report summary and timeseries over a year of conversations;
//   or attachments.ts (--attachments): 25 MB files up and down through the service, MB/s and RSS;
//   or routing.ts (--routing): applying batches with 50 agents in 5 routing teams against none,
//      and with --routing-drain a --role worker draining stored deliveries into each in turn;
//   or retention.ts (--retention): a day of the inbox deleted row by row against dropped as a partition;
//   or automation.ts (--automation): applying batches with 50 enabled automation rules against none;
//   or compare.ts (--compare <git-ref>): this build against the ref's, alternated, with ratios.
// Throughput is reported as a ratio against the ceiling because shared machines drift, and each
// figure with the load generator's own CPU share, so a generator-bound figure shows as one.
// Every number comes from this run; nothing is asserted.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PHONE_NUMBER_ID, ROOT, WEBHOOK_SECRET } from '../../harness/service.js';
import { loadConfig } from '../../src/config.js';
import { createConnection } from '../../src/connections/connections.service.js';
import { createDatabase } from '../../src/db/database.js';
import { startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { createWorkspace } from '../../src/workspaces/workspaces.service.js';
import { measureAttachments } from './attachments.js';
import { measureAutomation } from './automation.js';
import { seedReplyThreads } from './bench.queries.js';
import { POSTGRES_FLAGS, pct, say, TWILIO_NUMBER } from './common.js';
import { type Build, compareTable, measureCompare, prepareRef, SETUP_SQL, thisLabel } from './compare.js';
import { measureConversations } from './conversations.js';
import { measureIngest } from './ingest.js';
import { measureLatency } from './latency.js';
import { readBenchOptions } from './options.js';
import { measureOutbound, outboundLine, slowLine } from './outbound.js';
import { measureProcess } from './process.js';
import { measureReports } from './reports.js';
import { measureRetention, retentionLines } from './retention.js';
import { measureRouting, measureRoutingDrain } from './routing.js';
import { measureSend } from './send.js';
import { measureSingle } from './single.js';
import { drainCostLines, measureDrainCost, startProfiledPostgres } from './statements.js';

const options = readBenchOptions();
const out = (line: string) => process.stdout.write(`${line}\n`);

function table(rows: [string, string][], write = out): void {
  const width = Math.max(...rows.map(([k]) => k.length));
  for (const [k, v] of rows) write(`${k.padEnd(width)}  ${v}`);
}

async function main() {
  // Seeds and measures PostgreSQL alone, from the sources: no service process to build.
  if (options.retention) {
    const cost = await measureRetention(options);
    for (const line of retentionLines(cost)) out(line);
    if (options.json) out(JSON.stringify({ retention: cost }));
    return;
  }
  // The routing phase runs in this process from the sources: no service process to build.
  if ((!options.routing || options.routingDrain) && !options.automation) {
    say('building the service (npm run build)');
    execFileSync('npm', ['run', 'build', '--silent'], { cwd: ROOT, stdio: 'inherit' });
  }
  if (options.statements) {
    const ref = options.compare === undefined ? undefined : await prepareRef(options.compare);
    const builds: Build[] = [{ key: 'this', label: thisLabel(), root: ROOT }, ...(ref ? [ref.build] : [])];
    const postgres = await startProfiledPostgres();
    try {
      const costs = [];
      for (const build of builds) {
        say(`drain cost of ${build.label}: ${options.deliveries} deliveries stored, then drained`);
        const cost = await measureDrainCost(
          options,
          build.root,
          postgres.admin,
          postgres.url,
          `drain_${build.key}`,
          options.deliveries,
          build.key === 'this' ? SETUP_SQL : undefined,
        );
        for (const line of drainCostLines(build.label, cost)) out(line);
        costs.push({ build: build.label, ...cost });
      }
      if (options.json) out(JSON.stringify({ statements: costs }));
    } finally {
      await postgres.stop();
      await ref?.remove();
    }
    return;
  }
  if (options.compare !== undefined && !options.routing) {
    const c = await measureCompare({ ...options, compare: options.compare });
    for (const line of compareTable(c)) out(line);
    if (options.json) out(JSON.stringify({ compare: c }));
    return;
  }
  let stopPostgres = async () => {};
  let databaseUrl = process.env.DATABASE_URL;
  if (databaseUrl === undefined) {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-bench-'));
    const pg = await startEmbeddedPostgres(dir, { flags: POSTGRES_FLAGS }); // default durability: fsync and synchronous commit on
    databaseUrl = pg.url;
    stopPostgres = async () => {
      await pg.stop();
      await rm(dir, { recursive: true, force: true });
    };
  }
  const database = createDatabase(databaseUrl, { max: 2 });
  const db = database.db;
  try {
    await migrateToLatest(db);
    const workspace = await createWorkspace(db, 'Bench');
    const config = loadConfig({ INBOX_INTEGRATIONS: JSON.stringify({ whatsapp: { webhookSecret: WEBHOOK_SECRET } }) });
    // No credentials are set, so the key seals nothing.
    const connection = await createConnection(
      { db, config, secretKey: randomBytes(32) },
      workspace.id,
      {
        integrationKey: 'whatsapp',
        externalAccountId: PHONE_NUMBER_ID,
        name: 'Bench line',
      },
      'operator',
    );
    // The Twilio number of the ingest phase's form-encoded run, so phase 3 processes those too.
    await createConnection(
      { db, config, secretKey: randomBytes(32) },
      workspace.id,
      {
        integrationKey: 'sms.twilio',
        externalAccountId: TWILIO_NUMBER,
        name: 'Bench Twilio number',
      },
      'operator',
    );

    if (options.reports) {
      const r = await measureReports(options, databaseUrl, db, workspace.id, connection.id);
      out(
        `${r.conversations} conversations, ${r.messages} messages (seeded in ${r.seconds} s); ${options.samples} requests each, one at a time, over HTTP`,
      );
      table(r.timed.map((t) => [t.what, `p50 ${t.p50Ms} ms, p95 ${t.p95Ms} ms, max ${t.maxMs} ms`]));
      out(`the summary's statement alone: Postgres CPU per statement (load average ${os.loadavg()[0]!.toFixed(1)})`);
      table(r.cpu.map((c) => [c.what, c.postgresCpuMs === null ? 'n/a (Postgres not on this machine)' : `${c.postgresCpuMs} ms`]));
      if (options.json) out(JSON.stringify({ reports: r }));
      return;
    }

    if (options.conversations) {
      const c = await measureConversations(options, databaseUrl, db, workspace.id, connection.id);
      const line = (t: { what: string; p50Ms: number; p95Ms: number; maxMs: number; matches?: number }): [string, string] => [
        t.what,
        `p50 ${t.p50Ms} ms, p95 ${t.p95Ms} ms, max ${t.maxMs} ms${t.matches === undefined ? '' : ` (${t.matches} matching messages)`}`,
      ];
      out(
        `${c.seeded.threads} threads, ${c.seeded.messages} messages (seeded in ${c.seeded.seconds} s); ${options.samples} requests each, one at a time, over HTTP`,
      );
      table([
        line(c.threadPage),
        ...c.others.map(line),
        ...c.searches.map(line),
        ...c.restricted.map(line),
        ['api peak RSS', `${Math.round(c.rssMb)} MB`],
      ]);
      out(`\nEXPLAIN ANALYZE, thread page status=open&assigneeId=me:\n${c.plans.threadPage}`);
      out(`\nEXPLAIN ANALYZE, a team-restricted agent's first thread page:\n${c.plans.restrictedPage}`);
      out(`\nEXPLAIN ANALYZE, search for the most common word:\n${c.plans.searchCommon}`);
      out(`\nEXPLAIN ANALYZE, search for a middling word:\n${c.plans.searchMiddling}`);
      out(`\nEXPLAIN ANALYZE, search for a rare word:\n${c.plans.searchRare}`);
      if (options.json) out(JSON.stringify({ conversations: c }));
      return;
    }

    if (options.routing) {
      const r = await measureRouting(options, databaseUrl, db);
      const perSec = (key: 'routingPerSec' | 'plainPerSec') => r.rounds.map((x) => x[key]).join(', ');
      table([
        [
          'setup',
          `${r.agents} agents in ${r.teams} teams; ${r.eventsPerRun} messages per run in batches of ${r.batch}, ${r.newPercent.toFixed(0)} % opening a thread`,
        ],
        ['with routing (autoAssign)', `${perSec('routingPerSec')} messages/s`],
        ['without routing', `${perSec('plainPerSec')} messages/s`],
        [
          'routing / none',
          `${(r.ratio * 100).toFixed(1)} % (median of ${r.rounds.length} alternating rounds; lowest ${(r.lowest * 100).toFixed(1)} %, highest ${(r.highest * 100).toFixed(1)} %; goal ≥ 90 %)`,
        ],
        ['open threads of the last run', `${r.assigned} assigned by routing, ${r.waiting} waiting`],
      ]);
      if (options.json) out(JSON.stringify({ routing: r }));
      if (options.routingDrain) {
        const ref = options.compare === undefined ? undefined : await prepareRef(options.compare);
        try {
          const builds: Build[] = [{ key: 'this', label: thisLabel(), root: ROOT }, ...(ref ? [ref.build] : [])];
          const d = await measureRoutingDrain(options, databaseUrl, database, builds);
          out('');
          table([
            ['drain setup', `a --role worker drains ${d.deliveries} stored deliveries, ${d.newPercent.toFixed(0)} % opening a thread`],
          ]);
          for (const b of d.builds) {
            table([
              [`drain, ${b.label}, with routing`, `${b.rounds.map((x) => x.routingPerSec).join(', ')} deliveries/s`],
              [`drain, ${b.label}, without`, `${b.rounds.map((x) => x.plainPerSec).join(', ')} deliveries/s`],
              [
                `drain, ${b.label}, routing / none`,
                `${(b.ratio * 100).toFixed(1)} % (median of ${b.rounds.length} alternating rounds; lowest ${(b.lowest * 100).toFixed(1)} %, highest ${(b.highest * 100).toFixed(1)} %; goal ≥ 90 %)`,
              ],
            ]);
          }
          table([['open threads of the last drain', `${d.assigned} assigned by routing, ${d.waiting} waiting`]]);
          if (options.json) out(JSON.stringify({ routingDrain: d }));
        } finally {
          await ref?.remove();
        }
      }
      return;
    }

    if (options.automation) {
      const r = await measureAutomation(options, databaseUrl, db);
      const perSec = (key: 'rulesPerSec' | 'plainPerSec') => r.rounds.map((x) => x[key]).join(', ');
      table([
        ['setup', `${r.rules} enabled rules against none; ${r.eventsPerRun} messages per run in batches of 20, 10 % opening a thread`],
        [`with ${r.rules} rules`, `${perSec('rulesPerSec')} messages/s`],
        ['without rules', `${perSec('plainPerSec')} messages/s`],
        [
          'rules / none',
          `${(r.ratio * 100).toFixed(1)} % (median of ${r.rounds.length} alternating rounds; lowest ${(r.lowest * 100).toFixed(1)} %, highest ${(r.highest * 100).toFixed(1)} %; goal ≥ 90 %)`,
        ],
      ]);
      if (options.json) out(JSON.stringify({ automation: r }));
      return;
    }

    if (options.attachments) {
      const a = await measureAttachments(options, databaseUrl, db, workspace.id);
      if ('skipped' in a) out(`attachments phase skipped: ${a.skipped}`);
      else
        table([
          [`upload, one ${a.fileMb} MB file`, `${a.uploadMbPerSec} MB/s (median of 3; goal ≥ 100)`],
          [`download, one ${a.fileMb} MB file`, `${a.downloadMbPerSec} MB/s (median of 3; goal ≥ 100)`],
          [
            `${a.transfers} uploads at once`,
            `${a.concurrentUploadMbPerSec} MB/s in all; api RSS +${a.uploadsRssGrowthMb} MB over ${a.rssBeforeMb} MB (goal < 50)`,
          ],
          [
            `${a.transfers} downloads at once`,
            `${a.concurrentDownloadMbPerSec} MB/s in all; api RSS +${a.downloadsRssGrowthMb} MB over ${a.rssBeforeMb} MB (goal < 50)`,
          ],
        ]);
      if (options.json) out(JSON.stringify({ attachments: a }));
      return;
    }

    if (options.single) {
      const single = await measureSingle(options, databaseUrl, db);
      const { burst: b, sustained: s } = single;
      table(
        [
          ['ceiling (no-op route + HMAC)', `${b.ceilingRps} req/s, generator ${pct(b.ceilingGeneratorCpu)} of a core`],
          [
            'burst, one role-all process',
            `${b.rps} req/s, generator ${pct(b.generatorCpu)} of a core; ${(b.ratio * 100).toFixed(1)} % of the ceiling, p99 ${b.p99Ms} ms, non-2xx ${b.non2xx}, caught up ${b.catchUpSeconds} s after`,
          ],
          [
            `sustained at ${s.targetRps}/s`,
            `${s.achievedRps}/s acknowledged, generator ${pct(s.generatorCpu)} of a core; ack p50 ${s.ackP50Ms} p99 ${s.ackP99Ms} max ${s.ackMaxMs} ms, failed ${s.failed}`,
          ],
          [
            'received → processed',
            `p50 ${s.processedP50Ms} ms, p99 ${s.processedP99Ms} ms; backlog ${s.backlogStart} → ${s.backlogEnd} (max ${s.backlogMax})`,
          ],
          ['event-loop delay', `p99 ${s.eventLoopLagP99Ms} ms, max ${s.eventLoopLagMaxMs} ms`],
          ['peak RSS', `${single.rssMb} MB`],
          ...(single.wal
            ? [
                [
                  'WAL from the first burst on',
                  `${single.wal.gb} GB, ${single.wal.fullPageImages} full-page images; checkpoints ${single.wal.checkpointsRequested} requested, ${single.wal.checkpointsTimed} timed`,
                ] as [string, string],
              ]
            : []),
        ],
        say,
      ); // stdout carries only the JSON line here, as it always has
      if (options.json) out(JSON.stringify({ single }));
      return;
    }

    if (options.sendOnly) {
      await seedReplyThreads(db, workspace.id, connection.id, 500);
      const { rssMb, ...send } = await measureSend(options, databaseUrl, db, workspace.id, connection.id);
      table([...sendRows(send), ['peak RSS', `${Math.round(rssMb)} MB`]]);
      if (options.json) out(JSON.stringify({ send }));
      return;
    }

    if (options.outboundOnly) {
      const outbound = await measureOutbound(options, databaseUrl, db, workspace.id);
      const o = outbound.result;
      say(`outbound webhooks: ${outboundLine({ ...o, rssMb: Math.round(outbound.rssMb) })}`);
      if (options.json) out(JSON.stringify({ outbound: o, rssMb: Math.round(outbound.rssMb) }));
      return;
    }

    const ingest = await measureIngest(options, databaseUrl, db);
    const rounds = `median of rounds: ${ingest.rounds.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')}`;
    const tw = ingest.twilio;
    const twilioRows: [string, string][] = [
      [
        'ingest POST /webhooks/sms.twilio',
        `${tw.rps} req/s, generator ${pct(tw.generatorCpu)} of a core; p99 ${tw.p99Ms} ms, non-2xx ${tw.non2xx}`,
      ],
      [
        'twilio ingest / ceiling',
        `${(tw.ratio * 100).toFixed(1)} % (median of rounds: ${tw.rounds.map((r) => `${(r * 100).toFixed(0)} %`).join(', ')}); ${((tw.ratio / ingest.ratio) * 100).toFixed(1)} % of the WhatsApp ratio`,
      ],
    ];
    if (options.ingestOnly) {
      table([
        ['ceiling (no-op route + HMAC)', `${ingest.ceiling.rps} req/s, generator ${pct(ingest.ceiling.generatorCpu)} of a core`],
        [
          'ingest POST /webhooks/whatsapp',
          `${ingest.ingest.rps} req/s, generator ${pct(ingest.ingest.generatorCpu)} of a core; p99 ${ingest.ingest.p99Ms} ms, non-2xx ${ingest.ingest.non2xx}`,
        ],
        ['ingest / ceiling', `${(ingest.ratio * 100).toFixed(1)} % (${rounds})`],
        ...twilioRows,
        [
          'durable',
          `${ingest.ingest.acknowledged} acknowledged, ${ingest.ingest.rows} rows, ${ingest.ingest.queued} queued; api RSS ${Math.round(ingest.rssMb)} MB`,
        ],
      ]);
      if (options.json)
        out(
          JSON.stringify({
            ceiling: ingest.ceiling,
            ingest: ingest.ingest,
            ratio: ingest.ratio,
            rounds: ingest.rounds,
            twilio: ingest.twilio,
          }),
        );
      return;
    }
    const processed = await measureProcess(options, databaseUrl, db);
    const latency = await measureLatency(options, databaseUrl, db);
    const send = await measureSend(options, databaseUrl, db, workspace.id, connection.id);
    say(`6 outbound: ${options.outbound} webhook deliveries to one endpoint, then to four, then 200 events/s, one role-all process`);
    const outbound = await measureOutbound(options, databaseUrl, db, workspace.id);

    const { rssMb: sendRss, ...sendResult } = send;
    const result = {
      ceiling: ingest.ceiling,
      ingest: ingest.ingest,
      ratio: ingest.ratio,
      rounds: ingest.rounds,
      twilio: ingest.twilio,
      process: {
        workers: processed.workers,
        deliveriesPerSec: processed.deliveriesPerSec,
        drained: processed.drained,
        seconds: processed.seconds,
        p50LatencyMs: latency.p50LatencyMs,
        p99LatencyMs: latency.p99LatencyMs,
        pacedRps: latency.pacedRps,
        pacedGeneratorCpu: latency.generatorCpu,
      },
      send: sendResult,
      outbound: outbound.result,
      rssMb: Math.round(Math.max(ingest.rssMb, processed.rssMb, latency.rssMb, sendRss, outbound.rssMb)),
    };
    const o = outbound.result;
    table([
      [
        'ceiling (no-op route + HMAC)',
        `${result.ceiling.rps} req/s (median of ${options.rounds} rounds), generator ${pct(result.ceiling.generatorCpu)} of a core`,
      ],
      [
        'ingest POST /webhooks/whatsapp',
        `${result.ingest.rps} req/s, generator ${pct(result.ingest.generatorCpu)} of a core; p99 ${result.ingest.p99Ms} ms, non-2xx ${result.ingest.non2xx}`,
      ],
      ['ingest / ceiling', `${(result.ratio * 100).toFixed(1)} % (${rounds})`],
      ...twilioRows,
      ['durable', `${result.ingest.acknowledged} acknowledged, ${result.ingest.rows} rows, ${result.ingest.queued} queued`],
      [
        `processing (${options.workers} worker${options.workers === 1 ? '' : 's'})`,
        `${result.process.deliveriesPerSec} deliveries/s (${result.process.drained} in ${result.process.seconds} s)`,
      ],
      [
        `latency at ${options.rate}/s`,
        `p50 ${result.process.p50LatencyMs} ms, p99 ${result.process.p99LatencyMs} ms received → processed; generator ${pct(latency.generatorCpu)} of a core`,
      ],
      ...sendRows(send),
      [
        'outbound webhooks, 1 endpoint',
        `${o.oneEndpoint.deliveriesPerSec} deliveries/s (${o.oneEndpoint.delivered} in ${o.oneEndpoint.seconds} s, at most 10 in flight)`,
      ],
      [
        'outbound webhooks, 4 endpoints',
        `${o.fourEndpoints.deliveriesPerSec} deliveries/s (${o.fourEndpoints.delivered} in ${o.fourEndpoints.seconds} s)`,
      ],
      ['event → receiver at 200/s', `p50 ${o.latency.p50Ms} ms, p99 ${o.latency.p99Ms} ms (${o.latency.events} events)`],
      ['outbound webhooks, a slow receiver', slowLine(o.slowReceiver)],
      [
        'peak server RSS',
        `${result.rssMb} MB (api ${Math.round(ingest.rssMb)}, worker ${Math.round(processed.rssMb)}, all ${Math.round(latency.rssMb)}, send ${Math.round(sendRss)}, outbound ${Math.round(outbound.rssMb)})`,
      ],
    ]);
    if (options.json) out(JSON.stringify(result));
  } finally {
    await database.close();
    await stopPostgres();
  }
}

type SendFigures = Omit<Awaited<ReturnType<typeof measureSend>>, 'rssMb'>;

/** The reply phase's rows: text and template replies side by side, the route's and the sender's. */
function sendRows(send: SendFigures): [string, string][] {
  const posts = (p: SendFigures | SendFigures['template']) =>
    `${p.postRps} req/s, generator ${pct(p.postGeneratorCpu)} of a core; p99 ${p.postP99Ms} ms (${p.posted} answered 202, ${p.postNon2xx} not); CPU per reply, posted and sent: service ${p.postServiceCpuUs} µs, PostgreSQL ${p.postPostgresCpuUs} µs`;
  const t = send.template;
  return [
    ['reply POSTs, text (20 connections)', posts(send)],
    ['reply POSTs, template (20 connections)', posts(t)],
    ['sending text (1 process)', `${send.sendsPerSec} replies/s (${send.sent} queued replies sent in ${send.seconds} s)`],
    [
      'sending templates (1 process)',
      `${t.sendsPerSec} replies/s (${t.sent} queued template replies sent in ${t.seconds} s; ${((t.sendsPerSec / send.sendsPerSec) * 100).toFixed(0)} % of text; provider took ${t.providerAccepted})`,
    ],
  ];
}

await main();
process.exit(0);
