// What every phase of the bench shares: the service processes (the shared harness's
// startService, at `npm start`'s settings), the signed deliveries (built before a load starts,
// so the load generator only sends bytes), and a load that reports the generator's own CPU.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import autocannon from 'autocannon';
import { PHONE_NUMBER_ID, ROOT, type Role, type Service, startService, WEBHOOK_SECRET, waitUntil } from '../../harness/service.js';
import { whatsappTextBody } from '../../harness/whatsapp-delivery.js';
import { hmacDigest, hmacSha256Hex } from '../../src/crypto/hmac.js';
import type { Db } from '../../src/db/database.js';
import { anyDeliveryPending } from './bench.queries.js';
import type { BenchOptions } from './options.js';

export const say = (line: string) => process.stderr.write(`${line}\n`);
export const WARMUP_SECONDS = 2;
export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

// ---------------------------------------------------------------- deliveries

export interface SignedDelivery {
  body: Buffer;
  headers: Record<string, string>;
}

const FILLER = 'Hello, I would like to know where my order is. '.repeat(22);
const RUN = randomBytes(4).toString('hex');
let sequence = 0;

/**
 * `count` WhatsApp Cloud API text deliveries of about 1.5 KB, each with a unique message id and
 * its signature, built now: signing as the load runs would spend the generator's CPU on HMACs
 * and cap every figure at what the generator can sign.
 */
export function signedDeliveries(count: number): SignedDelivery[] {
  const out: SignedDelivery[] = [];
  for (let i = 0; i < count; i++) {
    sequence++;
    const body = Buffer.from(
      whatsappTextBody({
        phoneNumberId: PHONE_NUMBER_ID,
        from: `4477009${String(sequence % 2000).padStart(5, '0')}`,
        name: `Customer ${sequence % 2000}`,
        id: `wamid.bench.${RUN}.${sequence}`,
        text: `${sequence}: ${FILLER}`,
      }),
    );
    out.push({
      body,
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacSha256Hex(WEBHOOK_SECRET, body)}` },
    });
  }
  return out;
}

/** The Twilio account the ingest phase's sms.twilio deliveries are signed for. */
export const TWILIO_AUTH_TOKEN = randomBytes(16).toString('hex');
/** INBOX_PUBLIC_URL of the ingest phase's api: Twilio signs the URL it was given, not the socket's. */
export const BENCH_PUBLIC_URL = 'https://inbox.bench.example';
export const TWILIO_PATH = '/webhooks/sms.twilio';
/** The Twilio number the deliveries are sent to (`To`), connected by the bench. */
export const TWILIO_NUMBER = '+15557122661';

/**
 * `count` Twilio incoming-SMS webhooks, form-encoded as Twilio sends them, of about the
 * WhatsApp bodies' size, each with a unique MessageSid and its X-Twilio-Signature (base64
 * HMAC-SHA1 of the public URL and the sorted parameters), built now for the same reason.
 */
export function twilioDeliveries(count: number): SignedDelivery[] {
  const out: SignedDelivery[] = [];
  for (let i = 0; i < count; i++) {
    sequence++;
    const sid = `SM${RUN}${String(sequence).padStart(24, '0')}`;
    const params: Record<string, string> = {
      ToCountry: 'US',
      ToState: 'CA',
      SmsMessageSid: sid,
      NumMedia: '0',
      ToCity: 'SAN FRANCISCO',
      FromZip: '94105',
      SmsSid: sid,
      FromState: 'CA',
      SmsStatus: 'received',
      FromCity: 'SAN FRANCISCO',
      Body: `${sequence}: ${FILLER}`,
      FromCountry: 'US',
      To: TWILIO_NUMBER,
      ToZip: '94103',
      NumSegments: '9',
      MessageSid: sid,
      AccountSid: 'ACbench0000000000000000000000000000',
      From: `+1555${String(sequence % 2000).padStart(7, '0')}`,
      ApiVersion: '2010-04-01',
    };
    const signed = Object.keys(params)
      .sort()
      .reduce((data, name) => data + name + params[name], BENCH_PUBLIC_URL + TWILIO_PATH);
    out.push({
      body: Buffer.from(new URLSearchParams(params).toString()),
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-twilio-signature': hmacDigest('sha1', TWILIO_AUTH_TOKEN, Buffer.from(signed, 'utf8'), 'base64'),
      },
    });
  }
  return out;
}

/**
 * Deliveries enough for `seconds` of a burst: more than any ingestion on this kind of machine
 * answers (the ceiling reuses a small ring: it keeps nothing, so repeats cost it nothing).
 * Past the end the load wraps round and `repeated` says how often: the service then dedupes.
 */
export const BURST_BODIES_PER_SECOND = 8_000;

// ---------------------------------------------------------------- CPU of the generator

/** The share of one core this process used between `start()` and the call it returns. */
export function cpuShare(): () => number {
  const cpu = process.cpuUsage();
  const wall = performance.now();
  return () => {
    const used = process.cpuUsage(cpu);
    return Number(((used.user + used.system) / 1000 / Math.max(performance.now() - wall, 1)).toFixed(2));
  };
}

export const pct = (share: number) => `${Math.round(share * 100)} %`;

// ---------------------------------------------------------------- load

export interface Measured {
  result: autocannon.Result;
  /** The bench process's CPU over the load's wall time, as a share of one core (1 = one full core). */
  generatorCpu: number;
  /** Requests that re-sent a delivery already sent (the pre-built ones ran out). */
  repeated: number;
}

/** autocannon POSTing the pre-built `bodies` in turn (to `path`, WhatsApp's by default); with `ring` they are meant to repeat. */
export async function burst(
  url: string,
  bodies: SignedDelivery[],
  options: Partial<autocannon.Options> & { ring?: boolean; path?: string } = {},
): Promise<Measured> {
  const { ring, path = '/webhooks/whatsapp', ...rest } = options;
  let next = 0;
  const request = {
    method: 'POST' as const,
    path,
    setupRequest: (req: Record<string, unknown>) => {
      const d = bodies[next++ % bodies.length]!;
      return { ...req, body: d.body, headers: d.headers };
    },
  };
  const share = cpuShare();
  const result = await autocannon({ url, requests: [request as unknown as autocannon.Request], ...rest });
  return { result, generatorCpu: share(), repeated: ring ? 0 : Math.max(0, next - bodies.length) };
}

// ---------------------------------------------------------------- the service

/**
 * The heap limit `npm start` (and the Docker image) give the service of the checkout at `root`,
 * read from its package.json so the two cannot drift.
 */
function startNodeOptions(root: string): string {
  return /--max-old-space-size=\d+/.exec(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).scripts.start)?.[0] ?? '';
}

/** Extra node flags for the service processes, e.g. BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=/tmp/prof". */
const NODE_FLAGS = (process.env.BENCH_NODE_FLAGS ?? '').split(' ').filter(Boolean);

/**
 * Extra flags for the PostgreSQL the bench starts, e.g. BENCH_POSTGRES_FLAGS="-c max_wal_size=8GB":
 * a setting is measured before anyone is told to change it. Without it, PostgreSQL's defaults.
 */
export const POSTGRES_FLAGS = (process.env.BENCH_POSTGRES_FLAGS ?? '').split(' ').filter(Boolean);

export interface BenchService extends Service {
  peakRssMb(): number;
}

/**
 * The service as it ships (dist/, `npm start`'s heap limit), its RSS sampled for the peak;
 * `root` runs another checkout's build (`--compare`).
 */
export async function serve(
  options: Pick<BenchOptions, 'logLevel'>,
  role: Role,
  databaseUrl: string,
  extra: { whatsappApiBaseUrl?: string; env?: Record<string, string>; root?: string; waitForStart?: boolean } = {},
): Promise<BenchService> {
  const root = extra.root ?? ROOT;
  const svc = await startService({
    role,
    databaseUrl,
    root,
    ...(extra.waitForStart === false ? { waitForStart: false } : {}),
    nodeArgs: NODE_FLAGS,
    log: 'tail',
    ...(extra.whatsappApiBaseUrl ? { whatsappApiBaseUrl: extra.whatsappApiBaseUrl } : {}),
    env: {
      NODE_OPTIONS: startNodeOptions(root),
      // The worker announces readiness in its start line; it serves no requests to log.
      LOG_LEVEL: role === 'worker' ? 'info' : options.logLevel,
      // heap-sample.mjs, loaded by BENCH_NODE_FLAGS, writes where the bench was told to.
      ...(process.env.HEAP_SAMPLE_DIR ? { HEAP_SAMPLE_DIR: process.env.HEAP_SAMPLE_DIR } : {}),
      ...extra.env,
    },
  });
  let peak = svc.rssMb();
  const sampler = setInterval(() => (peak = Math.max(peak, svc.rssMb())), 200);
  void svc.exited.then(() => clearInterval(sampler));
  return Object.assign(svc, { peakRssMb: () => Math.max(peak, svc.rssMb()) });
}

/**
 * Polls `check` once a second (or every `intervalMs`), so the poll takes next to no CPU from
 * the process being measured; the measured times come from the rows' own timestamps, not from
 * when a poll noticed.
 */
export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, intervalMs = 1000): Promise<void> {
  await waitUntil(what, check, timeoutMs, intervalMs);
}

/**
 * Waits until no job of the webhook queue is left for `worker`, a `--role worker` process; one
 * that exits first is an error with the end of its log. Every 100 ms: the search indexer
 * starts 250 ms after the last batch, and its work is not the drain's.
 */
export async function waitForDrain(worker: BenchService, db: Db): Promise<void> {
  // A poll's error is retried by waitFor, so an exit is noted and told after.
  await waitFor(
    'the worker to drain the inbox',
    async () => worker.child.exitCode !== null || !(await anyDeliveryPending(db)),
    300_000,
    100,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; the worker's log ends:\n${worker.output().slice(-4000)}`);
  });
  if (worker.child.exitCode !== null) throw new Error(`the worker exited (${worker.child.exitCode}):\n${worker.output().slice(-4000)}`);
}
