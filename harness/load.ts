// Real load on 127.0.0.1: signed WhatsApp deliveries (autocannon), agents' replies, and
// realtime sockets that count what they receive. Every acknowledgement is remembered by the
// provider message id or the reply it stands for, so the checks can account for each one.
import { randomBytes } from 'node:crypto';
import autocannon from 'autocannon';
import type pg from 'pg';
import WebSocket from 'ws';
import { hmacSha256Hex } from '../src/crypto/hmac.js';
import { PHONE_NUMBER_ID, pause, type Tenant, WEBHOOK_SECRET, waitUntil } from './service.js';
import { whatsappTextBody } from './whatsapp-delivery.js';

const FILLER = 'Hello, I would like to know where my order is. '.repeat(8);
const RUN = randomBytes(4).toString('hex');
let sequence = 0;
let replySequence = 0;

/** A signed WhatsApp Cloud text delivery with a unique message id, from one of `senders` contacts. */
export function signedDelivery(senders = 500): { id: string; body: string; headers: Record<string, string> } {
  sequence++;
  const from = `4477${String(sequence % senders).padStart(8, '0')}`;
  const id = `wamid.faults.${RUN}.${sequence}`;
  const body = whatsappTextBody({
    phoneNumberId: PHONE_NUMBER_ID,
    from,
    name: `Customer ${sequence % senders}`,
    id,
    text: `${sequence}: ${FILLER}`,
  });
  return {
    id,
    body,
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacSha256Hex(WEBHOOK_SECRET, body)}` },
  };
}

export interface IngestLoad {
  /** Provider message ids answered 200. */
  acknowledged: Set<string>;
  /** Every answer's status, and connection errors (a process down). */
  statuses: Map<number | 'error', number>;
  /** Ends the load; resolves with autocannon's result once every connection is closed. */
  stop(): Promise<autocannon.Result>;
  done: Promise<autocannon.Result>;
}

/**
 * `connections` concurrent senders POSTing signed deliveries to each of `urls` in turn (one
 * autocannon per URL), until stopped or `seconds` pass. With `rate`, paced to that many
 * requests per second in all.
 */
export function ingestLoad(
  urls: string[],
  options: { connections: number; seconds?: number; rate?: number; onAnswer?: (status: number | 'error', at: number) => void },
): IngestLoad {
  const acknowledged = new Set<string>();
  const statuses = new Map<number | 'error', number>();
  const bump = (k: number | 'error') => {
    statuses.set(k, (statuses.get(k) ?? 0) + 1);
    options.onAnswer?.(k, Date.now());
  };
  // Without a callback autocannon answers a promise that is also its instance (stop, events).
  type Instance = Promise<autocannon.Result> & autocannon.Instance;
  const instances = urls.map((url) =>
    (autocannon as unknown as (o: autocannon.Options) => Instance)({
      url,
      connections: Math.max(1, Math.round(options.connections / urls.length)),
      duration: options.seconds ?? 3600,
      ...(options.rate ? { overallRate: Math.max(1, Math.round(options.rate / urls.length)) } : {}),
      // A request that hangs is a finding, not noise: counted as an error after 10 s.
      timeout: 10,
      requests: [
        {
          method: 'POST',
          path: '/webhooks/whatsapp',
          setupRequest: (req: Record<string, unknown>, context: Record<string, unknown>) => {
            const d = signedDelivery();
            context.id = d.id;
            return { ...req, body: d.body, headers: d.headers };
          },
          onResponse: (status: number, _body: string, context: Record<string, unknown>) => {
            bump(status);
            if (status === 200) acknowledged.add(context.id as string);
          },
        } as unknown as autocannon.Request,
      ],
    }),
  );
  for (const i of instances) i.on('reqError', () => bump('error'));
  const done = Promise.all(instances).then((results) => merge(results));
  return {
    acknowledged,
    statuses,
    done,
    async stop() {
      for (const i of instances) i.stop();
      return done;
    },
  };
}

function merge(results: autocannon.Result[]): autocannon.Result {
  if (results.length === 1) return results[0]!;
  const first = results[0]!;
  return {
    ...first,
    '2xx': results.reduce((n, r) => n + r['2xx'], 0),
    non2xx: results.reduce((n, r) => n + r.non2xx, 0),
    errors: results.reduce((n, r) => n + r.errors, 0),
    timeouts: results.reduce((n, r) => n + r.timeouts, 0),
    requests: { ...first.requests, average: results.reduce((n, r) => n + r.requests.average, 0) },
    latency: { ...first.latency, p99: Math.max(...results.map((r) => r.latency.p99)) },
  };
}

/** `count` deliveries from distinct contacts, so there are threads to reply to. */
export async function seedThreads(url: string, db: pg.Pool, count: number): Promise<number[]> {
  for (let i = 0; i < count; i++) {
    const d = signedDelivery(count);
    const res = await fetch(`${url}/webhooks/whatsapp`, { method: 'POST', headers: d.headers, body: d.body });
    if (res.status !== 200) throw new Error(`seeding a thread: ${res.status} ${await res.text()}`);
  }
  return waitUntil(
    `${count} threads`,
    async () => {
      const { rows } = await db.query<{ id: number }>('SELECT id FROM threads ORDER BY id');
      return rows.length >= count && rows.map((r) => r.id);
    },
    30_000,
  );
}

export interface ReplyTraffic {
  /** Reply text → message id, for every POST answered 202. */
  accepted: Map<string, number>;
  refused: number;
  stop(): Promise<void>;
}

/** `concurrency` agents replying to `threadIds` in turn through `urls`, each reply a unique text. */
export function replyTraffic(
  urls: string[],
  tenant: Tenant,
  threadIds: number[],
  options: { concurrency: number; pauseMs?: number },
): ReplyTraffic {
  const accepted = new Map<string, number>();
  let refused = 0;
  let running = true;
  const agent = async (a: number) => {
    while (running) {
      // Numbered across the whole run: the fake provider counts sends by text, for every part.
      const i = replySequence++;
      const text = `faults reply ${RUN}-${i}`;
      const url = urls[(a + i) % urls.length];
      try {
        const res = await fetch(`${url}/v1/threads/${threadIds[i % threadIds.length]}/messages`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-api-key': tenant.apiKey },
          body: JSON.stringify({ text }),
          signal: AbortSignal.timeout(15_000),
        });
        if (res.status === 202) accepted.set(text, ((await res.json()) as { data: { id: number } }).data.id);
        else {
          refused++;
          await res.body?.cancel();
        }
      } catch {
        refused++;
        await pause(100); // the process is down: agents retry, not spin
      }
      if (options.pauseMs) await pause(options.pauseMs);
    }
  };
  const agents = Array.from({ length: options.concurrency }, (_, a) => agent(a));
  return {
    accepted,
    get refused() {
      return refused;
    },
    async stop() {
      running = false;
      await Promise.all(agents);
    },
  };
}

export interface Listener {
  /** message.created events received, by message id. */
  created: Set<number>;
  events: number;
  close(): void;
}

/** A realtime socket on `url` that counts the events it receives. */
export async function listen(url: string, token: string): Promise<Listener> {
  const ws = new WebSocket(`${url.replace(/^http/, 'ws')}/v1/realtime`, { headers: { authorization: `Bearer ${token}` } });
  const created = new Set<number>();
  const state = { events: 0 };
  await new Promise<void>((resolve, reject) => {
    ws.on('message', (raw) => {
      const event = JSON.parse(String(raw)) as { type: string; data?: { id?: number } };
      if (event.type === 'ready') return resolve();
      state.events++;
      if (event.type === 'message.created' && typeof event.data?.id === 'number') created.add(event.data.id);
    });
    ws.once('error', reject);
    ws.once('unexpected-response', (_req, res) => reject(new Error(`realtime refused: ${res.statusCode}`)));
  });
  return {
    created,
    get events() {
      return state.events;
    },
    close: () => ws.close(),
  };
}

export interface Prober {
  /** Every answer of `path`: when, and the status (or 'error' when nothing answered in 3 s). */
  answers: { at: number; status: number | 'error' }[];
  stop(): void;
}

/** GETs `path` every `everyMs`, recording each answer. */
export function probe(url: string, path: string, everyMs = 200): Prober {
  const answers: Prober['answers'] = [];
  let running = true;
  void (async () => {
    while (running) {
      const at = Date.now();
      const status = await fetch(`${url}${path}`, { signal: AbortSignal.timeout(3000) }).then(
        async (r) => {
          await r.body?.cancel();
          return r.status;
        },
        () => 'error' as const,
      );
      answers.push({ at, status });
      await pause(everyMs);
    }
  })();
  return {
    answers,
    stop: () => {
      running = false;
    },
  };
}

export interface TrackedSenders {
  /** Provider message ids answered 200. */
  acknowledged: Set<string>;
  /** Each request: when it was sent, how long it took, and its status ('error' when cut, 'hung' after 60 s). */
  requests: { at: number; ms: number; status: number | 'error' | 'hung' }[];
  stop(): Promise<void>;
}

/**
 * `concurrency` senders posting signed deliveries one after another with fetch, each request
 * timed: unlike autocannon's aggregate, this says how long the slowest requests took and how
 * they ended.
 */
export function trackedSenders(url: string, concurrency: number): TrackedSenders {
  const acknowledged = new Set<string>();
  const requests: TrackedSenders['requests'] = [];
  let running = true;
  const sender = async () => {
    while (running) {
      const d = signedDelivery();
      const at = Date.now();
      const status = await fetch(`${url}/webhooks/whatsapp`, {
        method: 'POST',
        headers: d.headers,
        body: d.body,
        signal: AbortSignal.timeout(60_000),
      }).then(
        async (r) => {
          await r.body?.cancel();
          return r.status;
        },
        (err: Error) => (err.name === 'TimeoutError' ? ('hung' as const) : ('error' as const)),
      );
      requests.push({ at, ms: Date.now() - at, status });
      if (status === 200) acknowledged.add(d.id);
      else await pause(50);
    }
  };
  const senders = Array.from({ length: concurrency }, sender);
  return {
    acknowledged,
    requests,
    async stop() {
      running = false;
      await Promise.all(senders);
    },
  };
}
