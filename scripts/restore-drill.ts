// npm run restore-drill: proves a backup restores. It runs the service on a database, gives a
// connection sealed credentials, takes in signed deliveries, stops it, dumps the database with
// pg_dump, restores the dump into a new database with pg_restore, checks that every table has
// the same rows, then starts the service on the restored database with the same
// INBOX_SECRET_KEY and sends a reply, which reaches the (fake) provider with the restored
// credentials. Started with another key, the same reply fails: the key travels with the dump.
// docs/operations.md, "Backups", says which PostgreSQL it runs on and why.
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { seedThreads } from '../harness/load.js';
import { ADMIN_KEY, provisionTenant, type Service, say, startFake, startService, waitUntil } from '../harness/service.js';
import { type EmbeddedDatabase, freePort, startEmbeddedPostgres } from '../src/db/embedded.js';

const THREADS = 20;

interface Client {
  dir: string;
  major: number;
}

const major = (bin: string) => {
  const version = execFileSync(bin, ['--version'], { encoding: 'utf8' });
  return Number(/\(PostgreSQL\)\s+(\d+)/.exec(version)?.[1] ?? 0);
};

/** pg_dump/pg_restore pairs on this machine: PG_BIN, Debian's per-version folders, the PATH's. */
function clients(): Client[] {
  const dirs = [
    process.env.PG_BIN,
    ...(existsSync('/usr/lib/postgresql') ? readdirSync('/usr/lib/postgresql').map((v) => `/usr/lib/postgresql/${v}/bin`) : []),
    ...(process.env.PATH ?? '').split(':'),
  ].filter((d): d is string => !!d && existsSync(path.join(d, 'pg_dump')) && existsSync(path.join(d, 'pg_restore')));
  return [...new Set(dirs)].map((dir) => ({ dir, major: major(path.join(dir, 'pg_dump')) })).sort((a, b) => b.major - a.major);
}

interface Server {
  adminUrl: string;
  label: string;
  stop(): Promise<void>;
}

/**
 * A scratch cluster of the PostgreSQL installed beside a client (Debian's postgresql-N), when
 * the embedded server is newer than every pg_dump here: pg_dump refuses a newer server.
 */
async function scratchCluster(binDir: string): Promise<Server> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-drill-pg-'));
  const data = path.join(dir, 'data');
  const port = await freePort();
  // PostgreSQL refuses to run as root; the embedded one runs as the `postgres` user then too.
  const ids =
    process.getuid?.() === 0
      ? {
          uid: Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' })),
          gid: Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' })),
        }
      : {};
  if ('uid' in ids) execFileSync('chown', [`${ids.uid}:${ids.gid}`, dir]);
  execFileSync(path.join(binDir, 'initdb'), ['-D', data, '-U', 'postgres', '-A', 'trust', '--no-sync'], { ...ids, stdio: 'ignore' });
  const server: ChildProcess = spawn(
    path.join(binDir, 'postgres'),
    ['-D', data, '-p', String(port), '-k', dir, '-c', 'listen_addresses=127.0.0.1', '-c', 'fsync=off'],
    { ...ids, stdio: 'ignore' },
  );
  const adminUrl = `postgres://postgres@127.0.0.1:${port}/postgres`;
  await waitUntil(
    'the scratch PostgreSQL',
    async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      await c.end();
      return true;
    },
    30_000,
    100,
  );
  return {
    adminUrl,
    label: `a scratch cluster of ${binDir}/postgres`,
    async stop() {
      server.kill('SIGINT');
      await new Promise((r) => server.once('exit', r));
      await rm(dir, { recursive: true, force: true });
    },
  };
}

async function pickServer(client: Client): Promise<Server> {
  if (process.env.DATABASE_URL) return { adminUrl: process.env.DATABASE_URL, label: 'DATABASE_URL', stop: async () => {} };
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-drill-embedded-'));
  const embedded: EmbeddedDatabase = await startEmbeddedPostgres(dir);
  const c = new pg.Client({ connectionString: embedded.url });
  await c.connect();
  const serverMajor = Number((await c.query<{ v: string }>("SELECT current_setting('server_version_num') AS v")).rows[0]!.v.slice(0, -4));
  await c.end();
  if (client.major >= serverMajor) {
    return {
      adminUrl: embedded.url,
      label: `the embedded PostgreSQL ${serverMajor}`,
      async stop() {
        await embedded.stop();
        await rm(dir, { recursive: true, force: true });
      },
    };
  }
  await embedded.stop();
  await rm(dir, { recursive: true, force: true });
  say(`  the embedded PostgreSQL is ${serverMajor}, the newest pg_dump here is ${client.major} (pg_dump refuses a newer server)`);
  if (!existsSync(path.join(client.dir, 'postgres')) || !existsSync(path.join(client.dir, 'initdb'))) {
    throw new Error(
      `no pg_dump ${serverMajor} or newer, and no PostgreSQL ${client.major} server beside ${client.dir}: set PG_BIN or DATABASE_URL`,
    );
  }
  return scratchCluster(client.dir);
}

const withDatabase = (url: string, name: string) => {
  const u = new URL(url);
  u.pathname = `/${name}`;
  return u.toString();
};

async function tableCounts(url: string): Promise<Map<string, number>> {
  const db = new pg.Client({ connectionString: url });
  await db.connect();
  try {
    const { rows: tables } = await db.query<{ name: string }>(
      `SELECT format('%I.%I', schemaname, tablename) AS name FROM pg_tables
       WHERE schemaname IN ('public', 'pgboss') ORDER BY 1`,
    );
    const counts = new Map<string, number>();
    for (const t of tables) counts.set(t.name, Number((await db.query(`SELECT count(*) AS n FROM ${t.name}`)).rows[0].n));
    return counts;
  } finally {
    await db.end();
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const found = clients();
  if (found.length === 0) throw new Error('no pg_dump and pg_restore on this machine (Debian: apt-get install postgresql-client)');
  const client = found[0]!;
  say(`restore drill: pg_dump and pg_restore ${client.major} from ${client.dir}`);
  const server = await pickServer(client);
  say(`  PostgreSQL: ${server.label}`);
  const admin = new pg.Client({ connectionString: server.adminUrl });
  await admin.connect();
  const suffix = randomBytes(4).toString('hex');
  const source = `inbox_drill_${suffix}`;
  const restored = `inbox_drill_${suffix}_restored`;
  const fake = await startFake();
  const services: Service[] = [];
  const work = await mkdtemp(path.join(os.tmpdir(), 'inbox-drill-'));
  const secretKey = randomBytes(32).toString('hex');
  const token = `drill-${randomBytes(8).toString('hex')}`;
  const run = async (database: string, key: string) => {
    const svc = await startService({
      role: 'all',
      databaseUrl: withDatabase(server.adminUrl, database),
      entry: 'source',
      log: 'tail',
      whatsappApiBaseUrl: fake.baseUrls.whatsapp,
      env: { INBOX_SECRET_KEY: key, LOG_LEVEL: 'warn' },
    });
    services.push(svc);
    return svc;
  };
  let failed = false;
  const check = (ok: boolean, what: string) => {
    say(`  ${ok ? 'ok  ' : 'FAIL'} ${what}`);
    if (!ok) failed = true;
  };
  try {
    await admin.query(`CREATE DATABASE ${source}`);
    const first = await run(source, secretKey);
    const tenant = await provisionTenant(first.url, 'Restore drill');
    const adminKey = await fetch(`${first.url}/v1/engage/workspaces/${tenant.workspaceId}/api-keys`, {
      method: 'POST',
      headers: { 'x-service-admin-api-key': ADMIN_KEY, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'drill', scopes: ['admin'] }),
    }).then(async (r) => ((await r.json()) as { data: { key: string } }).data.key);
    // Credentials sealed under INBOX_SECRET_KEY, used instead of the integration's own token.
    const patched = await fetch(`${first.url}/v1/connections/${tenant.connectionId}`, {
      method: 'PATCH',
      headers: { 'x-api-key': adminKey, 'content-type': 'application/json' },
      body: JSON.stringify({ credentials: { accessToken: token } }),
    });
    if (patched.status !== 200) throw new Error(`setting credentials: ${patched.status} ${await patched.text()}`);
    const db = new pg.Pool({ connectionString: withDatabase(server.adminUrl, source), max: 2 });
    await seedThreads(first.url, db, THREADS);
    await db.end();
    await first.stop();
    say(`  seeded ${source}: a workspace, a WhatsApp connection with sealed credentials, ${THREADS} inbound conversations`);

    const dump = path.join(work, 'inbox.dump');
    const t0 = Date.now();
    execFileSync(path.join(client.dir, 'pg_dump'), ['--format=custom', '--file', dump, withDatabase(server.adminUrl, source)]);
    await admin.query(`CREATE DATABASE ${restored}`);
    execFileSync(path.join(client.dir, 'pg_restore'), [
      '--no-owner',
      '--exit-on-error',
      '--dbname',
      withDatabase(server.adminUrl, restored),
      dump,
    ]);
    say(`  pg_dump --format=custom, then pg_restore into ${restored}: ${((Date.now() - t0) / 1000).toFixed(1)} s`);

    const [before, after] = [
      await tableCounts(withDatabase(server.adminUrl, source)),
      await tableCounts(withDatabase(server.adminUrl, restored)),
    ];
    const differ = [...before].filter(([t, n]) => after.get(t) !== n).map(([t, n]) => `${t} ${n} → ${after.get(t)}`);
    const rows = [...before.values()].reduce((a, b) => a + b, 0);
    check(before.size > 20 && after.size === before.size, `${before.size} tables in the dump, ${after.size} restored`);
    check(
      differ.length === 0,
      `every table has the same rows (${rows} in all; threads ${after.get('public.threads')}, messages ${after.get('public.messages')})${differ.length ? `: ${differ.join(', ')}` : ''}`,
    );

    const reply = async (key: string, text: string) => {
      const svc = await run(restored, key);
      const db = new pg.Pool({ connectionString: withDatabase(server.adminUrl, restored), max: 2 });
      try {
        const threadId = (await db.query<{ id: number }>('SELECT id FROM threads ORDER BY id LIMIT 1')).rows[0]!.id;
        const res = await fetch(`${svc.url}/v1/threads/${threadId}/messages`, {
          method: 'POST',
          headers: { 'x-api-key': tenant.apiKey, 'content-type': 'application/json' },
          body: JSON.stringify({ text }),
        });
        const id = ((await res.json()) as { data: { id: number } }).data.id;
        return await waitUntil(
          `the reply "${text}" to settle`,
          async () => {
            const row = (await db.query<{ status: string; error: string | null }>('SELECT status, error FROM messages WHERE id = $1', [id]))
              .rows[0];
            return row && row.status !== 'queued' && row;
          },
          30_000,
        );
      } finally {
        await db.end();
        await svc.stop();
      }
    };
    const text = `restored ${suffix}`;
    const sent = await reply(secretKey, text);
    const call = fake.requests.find((r) => r.provider === 'whatsapp' && (r.parsed as { text?: { body?: string } })?.text?.body === text);
    check(sent.status === 'sent', `a reply on the restored database with the same INBOX_SECRET_KEY: ${sent.status}`);
    check(call?.headers.authorization === `Bearer ${token}`, 'it reached the provider with the restored credentials');
    const wrong = await reply(randomBytes(32).toString('hex'), `${text} under another key`);
    check(
      wrong.status === 'failed' && /cannot be opened/.test(wrong.error ?? ''),
      `with another INBOX_SECRET_KEY the reply fails: ${wrong.status}, "${(wrong.error ?? '').slice(0, 90)}…"`,
    );
  } finally {
    for (const s of services) await s.stop().catch(() => {});
    await fake.close();
    await admin.query(`DROP DATABASE IF EXISTS ${source} WITH (FORCE)`).catch(() => {});
    await admin.query(`DROP DATABASE IF EXISTS ${restored} WITH (FORCE)`).catch(() => {});
    await admin.end();
    await server.stop();
    await rm(work, { recursive: true, force: true });
  }
  say(`restore drill ${failed ? 'FAILED' : 'passed'} in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  process.exit(failed ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`restore drill failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
