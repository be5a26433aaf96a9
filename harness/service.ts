// The service harness the fault suite, the bench and the tests share: a real PostgreSQL it can
// stop and start, the service as real processes (the compiled CLI, as `npm start` runs it), a
// loopback fake provider, and the tenant every fault part provisions through the engage admin API.
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync, readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from '../src/db/embedded.js';
import { type FakeProviders, startFakeProviders } from './fake-providers.js';

export const ROOT = path.resolve(import.meta.dirname, '..');
/** The compiled CLI, as `npm start` runs it; `bin/inbox.js` runs the TypeScript source (tests). */
const ENTRIES = { dist: 'dist/src/cli.js', source: 'bin/inbox.js' };
export const ADMIN_KEY = `faults-admin-${randomBytes(16).toString('hex')}`;
export const WEBHOOK_SECRET = randomBytes(24).toString('hex');
const JWT_SECRET = randomBytes(32).toString('hex');
const SECRET_KEY = randomBytes(32).toString('hex');

export const say = (line: string) => process.stdout.write(`${line}\n`);

/** Every service process writes its whole log here, one file per process. */
export const LOG_DIR = path.join(os.tmpdir(), `inbox-faults-${new Date().toISOString().replace(/[:.]/g, '-')}`);

/** Resolves after `ms`. Only for pacing load and polling, never as a wait for an outcome. */
export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `check` every `everyMs` until it is truthy; throws with `what` after `timeoutMs`. */
export async function waitUntil<T>(
  what: string,
  check: () => Promise<T | undefined | null | false>,
  timeoutMs: number,
  everyMs = 250,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check().catch(() => undefined);
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out after ${timeoutMs / 1000} s waiting for ${what}`);
    await pause(everyMs);
  }
}

// ---------------------------------------------------------------- PostgreSQL

export interface Postgres {
  url: string;
  /** A pool for the driver's own checks (never the service's). */
  pool: pg.Pool;
  /** Fast shutdown (every connection is ended), as a database restart or failover does. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

/** A PostgreSQL of the suite's own, default durability, on a fixed port so it can come back. */
export async function startPostgres(): Promise<Postgres> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-faults-'));
  const port = await freePort();
  const flags = ['-c', 'max_connections=300'];
  let db: EmbeddedDatabase | undefined = await startEmbeddedPostgres(dir, { port, flags });
  const url = db.url;
  const pool = new pg.Pool({ connectionString: url, max: 4, application_name: 'faults-driver' });
  pool.on('error', () => {});
  return {
    url,
    pool,
    async stop() {
      await db?.stop();
      db = undefined;
    },
    async start() {
      db = await startEmbeddedPostgres(dir, { port, flags });
    },
    async destroy() {
      await pool.end().catch(() => {});
      await db?.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** One row of one query, for the checks. */
export async function one<T>(pool: pg.Pool, text: string, values: unknown[] = []): Promise<T> {
  const { rows } = await pool.query(text, values);
  return rows[0] as T;
}

// ---------------------------------------------------------------- the service

export type Role = 'all' | 'api' | 'worker';

export interface Service {
  role: Role;
  url: string;
  /** The whole log of the process ('' when only its tail is kept). */
  logFile: string;
  child: ChildProcess;
  exited: Promise<number | null>;
  output(): string;
  /** Resident memory of the process and its children (role all's worker process), in MB. */
  rssMb(): number;
  /** SIGKILL: no shutdown, no rollback but the database's own. */
  kill9(): Promise<void>;
  /** SIGTERM and wait for the graceful exit. */
  stop(): Promise<void>;
}

export interface ServiceOptions {
  role: Role;
  databaseUrl: string;
  port?: number;
  /** Where replies go (the fake provider's WhatsApp base URL). */
  whatsappApiBaseUrl?: string;
  env?: Record<string, string>;
  /** Default dist (run `npm run build` first). */
  entry?: keyof typeof ENTRIES;
  /**
   * The checkout whose build runs (default this one): the bench's `--compare` runs another
   * commit's build from its own worktree, driven by this checkout's code.
   */
  root?: string;
  /** Node flags before the entry, e.g. `--cpu-prof`. */
  nodeArgs?: string[];
  /**
   * `file` (default) writes the whole log to LOG_DIR; `tail` keeps only the last 64 KB in memory,
   * for a load driver whose own CPU must not grow with a log line per request.
   */
  log?: 'file' | 'tail';
  /**
   * false: return as soon as the process is spawned. A worker started on a large backlog
   * processes it before its start line comes, so a driver timing its work cannot wait for it.
   */
  waitForStart?: boolean;
}

export function rssMbOf(pid: number | undefined): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** The pids of a process's children (none once it has exited). */
export function childrenOf(pid: number | undefined): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** `node dist/src/cli.js serve --role …`, ready when it says so (and, with HTTP, /readyz answers). */
export async function startService(options: ServiceOptions): Promise<Service> {
  const port = options.port ?? (await freePort());
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-faults-svc-'));
  const whatsapp = {
    webhookSecret: WEBHOOK_SECRET,
    accessToken: 'faults-token',
    ...(options.whatsappApiBaseUrl ? { apiBaseUrl: options.whatsappApiBaseUrl } : {}),
  };
  const root = options.root ?? ROOT;
  const entry = path.join(root, ENTRIES[options.entry ?? 'dist']);
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), entry, 'serve', '--role', options.role], {
    cwd: root,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '/root',
      DATABASE_URL: options.databaseUrl,
      PORT: String(port),
      // A worker serves /healthz, /readyz and /metrics there: one free port per process.
      INBOX_METRICS_PORT: String(port),
      INBOX_DATA_DIR: dataDir,
      INBOX_ADMIN_API_KEY: ADMIN_KEY,
      INBOX_JWT_SECRET: JWT_SECRET,
      INBOX_SECRET_KEY: SECRET_KEY,
      INBOX_INTEGRATIONS: JSON.stringify({ whatsapp }),
      LOG_LEVEL: 'info',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const toFile = (options.log ?? 'file') === 'file';
  const tail = toFile ? 200_000 : 65_536;
  if (toFile) mkdirSync(LOG_DIR, { recursive: true });
  const logFile = toFile ? path.join(LOG_DIR, `${options.role}-${port}-${child.pid}.log`) : '';
  const log = toFile ? createWriteStream(logFile) : undefined;
  const keep = (d: Buffer) => {
    log?.write(d);
    output = (output + d).slice(-tail);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  void exited.then(() => rm(dataDir, { recursive: true, force: true }));
  // Not at 'exit': role all's worker process writes to the same pipes, and after a SIGKILL of
  // its parent it goes on until it has stopped (its lines then still reach the log).
  child.once('close', () => log?.end());
  const url = `http://127.0.0.1:${port}`;
  // Above info the start line is not written: an HTTP role is then ready when /readyz answers.
  const quiet = !['trace', 'debug', 'info'].includes(options.env?.LOG_LEVEL ?? 'info');
  // This role's own start line: role all's worker process writes its own to the same pipe.
  const started = new RegExp(`"role":"${options.role}"[^\\n]*"msg":"inbox is running"`);
  const deadline = Date.now() + 60_000;
  while (options.waitForStart !== false) {
    if (child.exitCode !== null) throw new Error(`inbox serve --role ${options.role} exited early:\n${output.slice(-4000)}`);
    if (Date.now() > deadline) throw new Error(`inbox serve --role ${options.role} not ready in 60 s:\n${output.slice(-4000)}`);
    if (started.test(output) || (quiet && options.role !== 'worker')) {
      if (options.role === 'worker') break;
      if (
        await fetch(`${url}/readyz`).then(
          (r) => r.ok,
          () => false,
        )
      )
        break;
    }
    await pause(50);
  }
  return {
    role: options.role,
    url,
    logFile,
    child,
    exited,
    output: () => output,
    rssMb: () => childrenOf(child.pid).reduce((mb, pid) => mb + rssMbOf(pid), rssMbOf(child.pid)),
    async kill9() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
  };
}

// ---------------------------------------------------------------- tenant

/** The WhatsApp phone-number id every part's deliveries are addressed to. */
export const PHONE_NUMBER_ID = '106540352242922';

export interface Tenant {
  workspaceId: number;
  connectionId: number;
  apiKey: string;
  /** A user's JWT, for realtime sockets. */
  accessToken: string;
}

async function call<T>(url: string, init: RequestInit & { json?: unknown }): Promise<T> {
  const res = await fetch(url, {
    ...init,
    headers: { ...(init.json !== undefined ? { 'content-type': 'application/json' } : {}), ...(init.headers as Record<string, string>) },
    body: init.json !== undefined ? JSON.stringify(init.json) : init.body,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${url}: ${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** A workspace, its WhatsApp connection, a write API key and a logged-in user, through the engage API. */
export async function provisionTenant(baseUrl: string, name = 'Faults'): Promise<Tenant> {
  const admin = { 'x-service-admin-api-key': ADMIN_KEY };
  const ws = await call<{ data: { id: number } }>(`${baseUrl}/v1/engage/workspaces`, { method: 'POST', headers: admin, json: { name } });
  const id = ws.data.id;
  const conn = await call<{ data: { id: number } }>(`${baseUrl}/v1/engage/workspaces/${id}/connections`, {
    method: 'POST',
    headers: admin,
    json: { integrationKey: 'whatsapp', externalAccountId: PHONE_NUMBER_ID, name: 'Faults line' },
  });
  const key = await call<{ data: { key: string } }>(`${baseUrl}/v1/engage/workspaces/${id}/api-keys`, {
    method: 'POST',
    headers: admin,
    json: { name: 'faults', scopes: ['write'] },
  });
  const email = `agent-${randomBytes(4).toString('hex')}@faults.test`;
  const password = randomBytes(12).toString('hex');
  await call(`${baseUrl}/v1/engage/workspaces/${id}/users`, { method: 'POST', headers: admin, json: { name: 'Agent', email, password } });
  const login = await call<{ access_token: string }>(`${baseUrl}/api/user/login`, { method: 'POST', json: { email, password } });
  return { workspaceId: id, connectionId: conn.data.id, apiKey: key.data.key, accessToken: login.access_token };
}

export async function startFake(): Promise<FakeProviders & { sentAt: Map<string, number[]> }> {
  const sentAt = new Map<string, number[]>();
  const fake = await startFakeProviders({
    onRequest: (r) => {
      const body = (r.parsed as { text?: { body?: string } } | undefined)?.text?.body;
      if (r.provider !== 'whatsapp' || typeof body !== 'string') return;
      const times = sentAt.get(body) ?? [];
      times.push(Date.now());
      sentAt.set(body, times);
    },
  });
  // The fake keeps every request; the checks only need the times per reply text.
  const forget = setInterval(() => (fake.requests.length = 0), 1000);
  forget.unref();
  return Object.assign(fake, { sentAt });
}
