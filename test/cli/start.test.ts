import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { type AddressInfo, createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../src/db/embedded.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const BIN = path.join(ROOT, 'bin/inbox.js');
const ADMIN = 'start-test-admin-key-0123456789abcdef';

interface Run {
  child: ChildProcess;
  output: () => string;
  exited: Promise<number | null>;
}

/** `group`: in a process group of its own, as a shell starts a command, so a test can signal it as Ctrl-C does. */
function run(args: string[], env: Record<string, string>, input?: string, { group = false } = {}): Run {
  let output = '';
  const child = spawn(process.execPath, [BIN, ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/root', LOG_LEVEL: 'info', ...env },
    stdio: ['pipe', 'pipe', 'pipe'],
    detached: group,
  });
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  if (input !== undefined) child.stdin!.end(input);
  else child.stdin!.end();
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Polls until the service answers /readyz, or fails with what it printed. */
async function waitReady(base: string, proc: Run, deadlineMs = 60_000): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    if (proc.child.exitCode !== null) throw new Error(`service exited early:\n${proc.output()}`);
    try {
      // Ready means both: the HTTP side answers and the service has said it runs. Its worker
      // process says so too, on the same pipe, and may say it first; and a 200 may reach this
      // process before the pipe's data does, though the line was written before the 200.
      const res = await fetch(`${base}/readyz`);
      if (res.status === 200 && /"role":"all"[^\n]*"msg":"inbox is running"/.test(proc.output())) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`service not ready in time:\n${proc.output()}`);
}

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

describe('the service entry', () => {
  it('serves on an embedded Postgres, stops cleanly on SIGTERM and finds its data after a restart', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-start-'));
    dirs.push(dataDir);
    const port = await freePort();
    const env = { INBOX_DATA_DIR: dataDir, PORT: String(port), INBOX_ADMIN_API_KEY: ADMIN };
    const base = `http://127.0.0.1:${port}`;

    const first = run(['serve'], env);
    await waitReady(base, first);
    expect(first.output()).toContain('inbox is running');
    expect(first.output()).toContain(`"url":"${base}"`);
    expect(first.output()).not.toMatch(/postgres:\/\/postgres:[^*@]+@/); // the password is redacted
    // No workspace yet: the first start logs the one-time setup link (docs/accounts.md).
    expect(first.output()).toMatch(new RegExp(`open ${base}/app/setup#token=[\\w-]{43} to create the first workspace`));

    const created = await fetch(`${base}/v1/engage/workspaces`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-admin-api-key': ADMIN },
      body: JSON.stringify({ name: 'Survives restarts' }),
    });
    expect(created.status).toBe(201);
    const workspace = ((await created.json()) as { data: { id: number } }).data;

    // An operator's CLI beside the running service attaches to its database.
    const cli = run(['create-api-key', '--workspace', String(workspace.id), '--name', 'from cli', '--scopes', 'admin'], {
      INBOX_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    });
    expect(await cli.exited, cli.output()).toBe(0);
    const key = JSON.parse(cli.output().slice(cli.output().indexOf('{'))).key as string;
    expect((await fetch(`${base}/v1/api-keys`, { headers: { 'x-api-key': key } })).status).toBe(200);

    first.child.kill('SIGTERM');
    expect(await first.exited).toBe(0);
    expect(first.output()).toContain('inbox stopped');

    const second = run(['serve'], env, undefined, { group: true });
    await waitReady(base, second);
    expect(second.output()).not.toContain('/app/setup#token=');
    const tenants = await fetch(`${base}/v1/operator/tenants`, { headers: { 'x-service-admin-api-key': ADMIN } });
    expect(((await tenants.json()) as { data: unknown[] }).data).toContainEqual(
      expect.objectContaining({ id: workspace.id, name: 'Survives restarts' }),
    );
    // Ctrl-C in a terminal signals the whole process group. Only the service may hear it: its
    // worker process and its PostgreSQL stop when it stops them, after the requests and jobs
    // in hand, so nothing is cut off mid-statement and logged as an error.
    process.kill(-second.child.pid!, 'SIGINT');
    expect(await second.exited).toBe(0);
    const lines = second.output().split('\n');
    expect(
      lines.filter((l) => /"level":(40|50|60)/.test(l) && !l.includes('/app/setup#token=')),
      second.output(),
    ).toEqual([]);
    expect(lines.filter((l) => l.includes('"msg":"inbox stopped"'))).toHaveLength(2); // the service and its worker process
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), 'PostgreSQL stopped with the service').toBe(false);
  }, 120_000);

  it('after a kill -9, the next start takes over the PostgreSQL left running and stops it when it stops', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-start-'));
    dirs.push(dataDir);
    const port = await freePort();
    const env = { INBOX_DATA_DIR: dataDir, PORT: String(port), INBOX_ADMIN_API_KEY: ADMIN };
    const base = `http://127.0.0.1:${port}`;
    const pidFile = path.join(dataDir, 'postgres', 'postmaster.pid');

    const first = run(['serve'], env);
    await waitReady(base, first);
    first.child.kill('SIGKILL');
    await first.exited;
    // The postmaster runs in a session of its own: it outlives the killed service.
    const postmaster = Number((await readFile(pidFile, 'utf8')).split('\n')[0]);
    expect(() => process.kill(postmaster, 0)).not.toThrow();

    const second = run(['serve'], env);
    await waitReady(base, second);
    expect(second.output()).toContain('embedded PostgreSQL was left running by a process that stopped without stopping it');
    second.child.kill('SIGTERM');
    expect(await second.exited, second.output()).toBe(0);
    // It was left running for good before: every later start attached to it and none stopped it.
    expect(existsSync(pidFile), 'PostgreSQL stopped with the service').toBe(false);
  }, 120_000);

  it('a SIGTERM while it starts stops it once started, PostgreSQL and worker process included', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-start-'));
    dirs.push(dataDir);
    const port = await freePort();
    const proc = run(['serve'], { INBOX_DATA_DIR: dataDir, PORT: String(port), INBOX_ADMIN_API_KEY: ADMIN });
    // The embedded PostgreSQL is up and the schema migrated; the api and its worker are not yet.
    const until = Date.now() + 60_000;
    while (!proc.output().includes('"msg":"database migrated"')) {
      if (proc.child.exitCode !== null || Date.now() > until) throw new Error(`no migration logged:\n${proc.output()}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    proc.child.kill('SIGTERM');
    expect(await proc.exited, proc.output()).toBe(0);
    expect(proc.output()).toContain('"signal":"SIGTERM","msg":"shutting down"');
    expect(proc.output().match(/"msg":"inbox stopped"/g)).toHaveLength(2); // the service and its worker process
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), 'PostgreSQL stopped with the service').toBe(false);
  }, 120_000);

  it('with PORT=0 listens on a free port, and the links it hands out name that port', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-start-'));
    dirs.push(dataDir);
    const proc = run(['serve'], { INBOX_DATA_DIR: dataDir, PORT: '0', INBOX_ADMIN_API_KEY: ADMIN });
    const until = Date.now() + 60_000;
    let base: string | undefined;
    while (base === undefined) {
      if (proc.child.exitCode !== null || Date.now() > until) throw new Error(`no start line:\n${proc.output()}`);
      base = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(proc.output())?.[1];
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(base).not.toMatch(/:0$/);
    expect(proc.output()).toMatch(new RegExp(`open ${base}/app/setup#token=[\\w-]{43} to create`));
    await waitReady(base, proc);
    proc.child.kill('SIGTERM');
    expect(await proc.exited, proc.output()).toBe(0);
  }, 120_000);

  it('refuses to start on bad configuration with one line naming the variable', async () => {
    const proc = run(['serve'], { PORT: 'eighty' });
    expect(await proc.exited).toBe(1);
    expect(proc.output()).toContain('PORT: expected a whole number from 0 to 65535, got "eighty"');
  });

  it('stops with one line naming DATABASE_URL, no stack and no password, when the database cannot be reached', async () => {
    for (const [args, url, reason] of [
      [['serve'], 'postgres://inbox:hunter2-db-password@127.0.0.1:1/inbox', 'connect ECONNREFUSED 127.0.0.1:1'],
      [['migrate'], 'postgres://inbox:hunter2-db-password@127.0.0.1:1/inbox', 'connect ECONNREFUSED 127.0.0.1:1'],
      [['create-workspace', '--name', 'W'], 'postgres://inbox:hunter2-db-password@db.invalid/inbox', 'ENOTFOUND db.invalid'],
    ] as const) {
      const proc = run([...args], { DATABASE_URL: url });
      expect(await proc.exited, proc.output()).toBe(1);
      expect(proc.output()).toMatch(new RegExp(`^inbox: cannot use the database DATABASE_URL names: .*${reason}\\n$`));
      expect(proc.output()).not.toContain('hunter2');
    }
  }, 60_000);

  it('stops with one line naming PORT and HOST when the address cannot be taken, and leaves nothing running', async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const port = (taken.address() as AddressInfo).port;
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-start-'));
    dirs.push(dataDir);
    try {
      const proc = run(['serve', '--role', 'api'], { INBOX_DATA_DIR: dataDir, PORT: String(port), LOG_LEVEL: 'warn' });
      expect(await proc.exited, proc.output()).toBe(1);
      expect(proc.output()).toBe(
        `inbox: configuration error\n  PORT, HOST: cannot listen on 127.0.0.1:${port} (listen EADDRINUSE: address already in use 127.0.0.1:${port})\n`,
      );
      expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid')), 'PostgreSQL stopped').toBe(false);
    } finally {
      taken.close();
    }
  }, 90_000);

  it('stops with one line naming INBOX_DATA_DIR when the data dir cannot be made', async () => {
    const parent = await mkdtemp(path.join(os.tmpdir(), 'inbox-start-'));
    dirs.push(parent);
    const file = path.join(parent, 'a-file');
    await writeFile(file, '');
    for (const args of [['migrate'], ['serve']]) {
      const proc = run(args, { INBOX_DATA_DIR: path.join(file, 'data'), LOG_LEVEL: 'warn' });
      expect(await proc.exited, proc.output()).toBe(1);
      expect(proc.output()).toMatch(
        new RegExp(`^inbox: INBOX_DATA_DIR: cannot use ${file}/data \\(ENOTDIR: not a directory, mkdir .*\\)\\n$`),
      );
    }
  }, 60_000);

  it('prints usage for an unknown command and exits 64', async () => {
    const proc = run(['frobnicate'], {});
    expect(await proc.exited).toBe(64);
    expect(proc.output()).toContain('unknown command "frobnicate"');
    expect(proc.output()).toContain('Usage: inbox <command>');
  });
});
