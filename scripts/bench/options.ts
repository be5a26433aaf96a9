// The options of `npm run bench`, each with its default and a line of help (`--help` prints them).
import { parseOptions } from '../cli-options.js';

export interface BenchOptions {
  json: boolean;
  seconds: number;
  rounds: number;
  connections: number;
  rate: number;
  workers: number;
  sends: number;
  outbound: number;
  logLevel: string;
  ingestOnly: boolean;
  outboundOnly: boolean;
  sendOnly: boolean;
  single: boolean;
  sustained: number;
  conversations: boolean;
  /** Run only the reports phase (reports.ts). */
  reports: boolean;
  threads: number;
  messages: number;
  samples: number;
  attachments: boolean;
  attachmentMb: number;
  attachmentTransfers: number;
  /** A git ref to compare this checkout's build with (`--compare`). */
  compare: string | undefined;
  statements: boolean;
  deliveries: number;
  routing: boolean;
  automation: boolean;
  routingEvents: number;
  routingNewPercent: number;
  /** Messages per applied batch in the routing phase. */
  routingBatch: number;
  /** The routing phase also drains stored deliveries with a real worker, each side in turn. */
  routingDrain: boolean;
  /** Run only the inbox retention phase (retention.ts). */
  retention: boolean;
  rows: number;
  bodyBytes: number;
}

const ABOUT = `Measures the service on this machine: ingestion beside a no-op ceiling (alternating rounds,
the ratio's median), processing, latency, sending and outbound webhooks; or, with --single, one
role-all process as \`npm start\` runs it; or, with --attachments, files up and down through the
service; or, with --routing, processing with routing against without; or, with --automation,
processing with 50 enabled automation rules against none; or, with --compare <git-ref>,
this build against the ref's, alternated round by round
(ingest beside the ceiling, a worker's drain, CPU per delivery, RSS). Figures go to stdout (--json adds one JSON line), progress
to stderr. Every figure is printed with the load generator's own CPU share (of one core).`;

export function readBenchOptions(argv?: string[]): BenchOptions {
  const v = parseOptions(
    'npm run bench --',
    ABOUT,
    {
      json: { type: 'boolean', help: 'also print the result as one JSON line' },
      seconds: { type: 'string', help: 'seconds of each measured load (default 5; 10 with --compare)' },
      rounds: { type: 'string', default: '3', help: 'alternating ceiling/ingest rounds, or --compare rounds (the median is reported)' },
      connections: { type: 'string', default: '200', help: 'concurrent connections of the bursts' },
      rate: { type: 'string', default: '500', help: 'deliveries/s of the latency phase' },
      workers: { type: 'string', default: '1', help: 'worker processes of the processing phase' },
      sends: { type: 'string', default: '5000', help: 'queued replies of the send phase' },
      outbound: { type: 'string', default: '20000', help: 'webhook deliveries of each outbound backlog' },
      // The service's own default, as `npm start` runs it; `warn` for the figures of earlier runs.
      'log-level': { type: 'string', default: 'info', help: 'LOG_LEVEL of the service processes' },
      'ingest-only': {
        type: 'boolean',
        help: 'stop after the ceiling/ingest rounds (with --compare: no drain, the acknowledging figures only)',
      },
      'outbound-only': { type: 'boolean', help: 'run only the outbound webhook phase (with --compare, against the ref)' },
      'send-only': { type: 'boolean', help: 'run only the reply phase (text, then template replies) on seeded threads' },
      single: { type: 'boolean', help: 'one role-all process: a burst beside the ceiling, then --sustained' },
      sustained: { type: 'string', default: '2000', help: "deliveries/s of --single's open-loop phase" },
      conversations: { type: 'boolean', help: 'run only the conversations phase: thread filters and message search on a large inbox' },
      reports: { type: 'boolean', help: 'run only the reports phase: summary and timeseries over a year of 100,000 conversations' },
      threads: { type: 'string', default: '100000', help: 'threads the conversations and reports phases seed' },
      messages: { type: 'string', default: '1000000', help: 'messages the conversations phase seeds' },
      samples: { type: 'string', default: '200', help: 'timed requests per read of the conversations phase' },
      attachments: {
        type: 'boolean',
        help: 'run only the attachments phase: upload and download of files through the service, MB/s and RSS',
      },
      'attachment-mb': { type: 'string', default: '25', help: 'MB of each file of the attachments phase' },
      'attachment-transfers': { type: 'string', default: '10', help: 'uploads (then downloads) at once in the attachments phase' },
      statements: {
        type: 'boolean',
        help: 'run only the drain cost phase: statements, rows and index entries per delivery (with --compare, of both builds)',
      },
      deliveries: { type: 'string', default: '20000', help: 'deliveries the drain cost phase stores and drains' },
      routing: {
        type: 'boolean',
        help: 'run only the routing phase: 50 agents in 5 teams with autoAssign against none, applying batches, alternated in one process',
      },
      automation: {
        type: 'boolean',
        help: 'run only the automation phase: 50 enabled rules in a workspace against none, applying batches, alternated in one process',
      },
      'routing-events': { type: 'string', default: '4000', help: 'inbound messages each routing-phase (or automation-phase) run applies' },
      'routing-new': { type: 'string', default: '10', help: 'percent of the routing phase’s messages that open a thread (and are routed)' },
      'routing-batch': {
        type: 'string',
        default: '20',
        help: 'messages per transaction in the routing phase (20: a light load; a worker draining a backlog takes about 150)',
      },
      'routing-drain': {
        type: 'boolean',
        help: 'with --routing, also a --role worker draining --routing-events stored deliveries into each workspace in turn (with --compare, of both builds)',
      },
      retention: {
        type: 'boolean',
        help: 'run only the retention phase: one day of the inbox deleted row by row against its partition dropped (time, WAL)',
      },
      rows: { type: 'string', default: '10000000', help: 'processed deliveries the retention phase seeds over 30 days' },
      'body-bytes': { type: 'string', default: '1024', help: 'bytes of each seeded delivery body of the retention phase' },
      compare: {
        type: 'string',
        help: 'compare this build with the build of a git ref (commit, branch, tag), built in a temporary worktree; see docs/performance.md',
      },
    },
    argv,
  );
  const number = (name: string, value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n <= 0) {
      process.stderr.write(`npm run bench --: --${name} must be a positive number, not "${value}" (see --help)\n`);
      process.exit(2);
    }
    return n;
  };
  return {
    json: v.json,
    seconds: number('seconds', v.seconds ?? (v.compare === undefined ? '5' : '10')),
    rounds: number('rounds', v.rounds),
    connections: number('connections', v.connections),
    rate: number('rate', v.rate),
    workers: number('workers', v.workers),
    sends: number('sends', v.sends),
    outbound: number('outbound', v.outbound),
    logLevel: v['log-level'],
    ingestOnly: v['ingest-only'],
    outboundOnly: v['outbound-only'],
    sendOnly: v['send-only'],
    single: v.single,
    sustained: number('sustained', v.sustained),
    conversations: v.conversations,
    reports: v.reports ?? false,
    threads: number('threads', v.threads),
    messages: number('messages', v.messages),
    samples: number('samples', v.samples),
    attachments: v.attachments,
    attachmentMb: number('attachment-mb', v['attachment-mb']),
    attachmentTransfers: number('attachment-transfers', v['attachment-transfers']),
    compare: v.compare,
    statements: v.statements,
    deliveries: number('deliveries', v.deliveries),
    routing: v.routing,
    automation: v.automation,
    routingEvents: number('routing-events', v['routing-events']),
    routingNewPercent: Math.min(100, number('routing-new', v['routing-new'])),
    routingBatch: Math.max(1, number('routing-batch', v['routing-batch'])),
    routingDrain: v['routing-drain'] ?? false,
    retention: v.retention ?? false,
    rows: number('rows', v.rows),
    bodyBytes: number('body-bytes', v['body-bytes']),
  };
}
