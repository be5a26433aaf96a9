import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { freePort } from '../../src/db/embedded.js';
import { blockScript, type Ports, type ShellBlock, serviceRunsFromTheStart } from './shell-blocks.js';

/**
 * Runs one markdown file's ```sh blocks the way a reader runs them: the service in one
 * terminal (`node bin/inbox.js serve`, a real process), and every block, in document order,
 * in ONE bash session in a second terminal, so variables carry from block to block.
 *
 * Both work in a temporary directory that mirrors the checkout by symlinks (package.json,
 * bin, src, scripts, node_modules, …) but has its own `.env` and `.data`: `npx inbox …`,
 * `npm run deliver`, `echo … >> .env` behave as in a checkout, and the checkout's own
 * configuration and data are never read or touched. Both have DATABASE_URL (the database
 * this file was given) and PORT in their environment; everything else comes from `.env`.
 *
 * The session runs with `set -euo pipefail`, so a failing command or an unset variable ends
 * it; its `curl` fails on an HTTP error status unless the docs say that status (see
 * shell-blocks.ts). Background commands a block starts (`npm run fake-provider -- … &`) must
 * still be running after the last block, and are then stopped with the session.
 * DOCS_TRANSCRIPT=1 prints everything the session prints as it runs.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
/** A checkout's own configuration and data, which the working directory must not share. */
const NOT_MIRRORED = new Set(['.env', '.data', '.git', '.dev', 'coverage']);
const BLOCK_TIMEOUT_MS = 150_000;
const LOG_LIMIT = 200_000;

/** The session's own script: the shell functions the blocks get, and the loop that runs them. */
const SESSION_SCRIPT = path.join(import.meta.dirname, 'docs-session.sh');

/** A reader's PATH: without the node_modules/.bin folders a test runner adds. */
function readerEnv(): Record<string, string> {
  const PATH = (process.env.PATH ?? '')
    .split(path.delimiter)
    .filter((p) => !p.includes(`node_modules${path.sep}.bin`))
    .join(path.delimiter);
  return { PATH, HOME: process.env.HOME ?? os.homedir(), LANG: 'C.UTF-8' };
}

async function mirrorCheckout(): Promise<string> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'inbox-docs-'));
  for (const name of await readdir(ROOT)) {
    if (!NOT_MIRRORED.has(name)) await symlink(path.join(ROOT, name), path.join(dir, name));
  }
  return dir;
}

const capped = (s: string) => (s.length > LOG_LIMIT ? s.slice(-LOG_LIMIT) : s);
const tail = (s: string, lines: number) => s.trimEnd().split('\n').slice(-lines).join('\n');
const indent = (s: string) => s.replace(/^/gm, '  ');

/** `node bin/inbox.js serve` in the working directory, as `npm start` runs it. */
class Service {
  log = '';
  private child: ChildProcess | undefined;

  constructor(
    private readonly dir: string,
    private readonly env: Record<string, string>,
    private readonly base: string,
  ) {}

  async start(): Promise<void> {
    const t0 = Date.now();
    try {
      await this.startOnce();
    } finally {
      if (process.env.DOCS_TRANSCRIPT) process.stderr.write(`[service start ${Date.now() - t0} ms]\n`);
    }
  }

  async stop(): Promise<void> {
    const t0 = Date.now();
    await this.stopOnce();
    if (process.env.DOCS_TRANSCRIPT) process.stderr.write(`[service stop ${Date.now() - t0} ms]\n`);
  }

  private async startOnce(): Promise<void> {
    const child = spawn(process.execPath, ['bin/inbox.js', 'serve'], { cwd: this.dir, env: this.env, stdio: ['ignore', 'pipe', 'pipe'] });
    this.child = child;
    const append = (d: Buffer) => {
      this.log = capped(this.log + d.toString());
    };
    child.stdout!.on('data', append);
    child.stderr!.on('data', append);
    const from = this.log.length;
    const until = Date.now() + 90_000;
    while (Date.now() < until) {
      if (child.exitCode !== null) throw new Error(`the service exited with status ${child.exitCode} while starting`);
      // Ready: HTTP answers and the service has said it runs (its own line, not its worker process's).
      if (/"role":"all"[^\n]*"msg":"inbox is running"/.test(this.log.slice(from))) {
        const res = await fetch(`${this.base}/readyz`).catch(() => undefined);
        if (res?.status === 200) return;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error('the service was not ready within 90 s');
  }

  private async stopOnce(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    await exited;
    clearTimeout(timer);
  }
}

/** Lines a child writes on one of its pipes, read one at a time. */
function lineReader(stream: Readable): () => Promise<string> {
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  let partial = '';
  stream.on('data', (d: Buffer) => {
    partial += d.toString();
    let nl = partial.indexOf('\n');
    while (nl >= 0) {
      const line = partial.slice(0, nl);
      partial = partial.slice(nl + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(line);
      else lines.push(line);
      nl = partial.indexOf('\n');
    }
  });
  return () => {
    const line = lines.shift();
    return line !== undefined ? Promise.resolve(line) : new Promise((resolve) => waiting.push(resolve));
  };
}

export interface DocTiming {
  line: number;
  ms: number;
}

/**
 * Runs the blocks of one file and resolves with each block's duration, or rejects with a
 * report naming the failing block, its text, what it printed and the service's last lines.
 */
export async function runDocBlocks(file: string, blocks: ShellBlock[], databaseUrl: string): Promise<DocTiming[]> {
  const ports: Ports = { service: await freePort(), fakeProvider: await freePort() };
  // Every block is checked before anything runs: a placeholder fails at once.
  const scripts = blocks.map((b) => {
    try {
      return blockScript(b.text, ports);
    } catch (err) {
      throw new Error(`${file}:${b.line}: ${(err as Error).message}\n${indent(b.text)}`);
    }
  });
  const dir = await mirrorCheckout();
  const scriptDir = await mkdtemp(path.join(os.tmpdir(), 'inbox-docs-blocks-'));
  const env = { ...readerEnv(), DATABASE_URL: databaseUrl, PORT: String(ports.service) };
  const service = new Service(dir, { ...env, LOG_LEVEL: 'info' }, `http://127.0.0.1:${ports.service}`);
  let session: ChildProcess | undefined;
  let output = '';
  const timings: DocTiming[] = [];
  const failure = (where: string, why: string, text: string | undefined, from: number) =>
    new Error(
      [
        `${file}:${where}: ${why}`,
        ...(text === undefined ? [] : ['--- the block', indent(text)]),
        '--- what it printed',
        indent(output.slice(from).trimEnd() || '(nothing)'),
        "--- the service's last log lines",
        indent(tail(service.log, 30)),
      ].join('\n'),
    );
  try {
    if (serviceRunsFromTheStart(blocks)) await service.start();
    session = spawn('bash', ['--noprofile', '--norc', SESSION_SCRIPT], {
      cwd: dir,
      env,
      stdio: ['ignore', 'pipe', 'pipe', 'pipe', 'pipe'],
      // Its own process group, so the background commands of its blocks end with it.
      detached: true,
    });
    const append = (d: Buffer) => {
      output = capped(output + d.toString());
      if (process.env.DOCS_TRANSCRIPT) process.stderr.write(d);
    };
    session.stdout!.on('data', append);
    session.stderr!.on('data', append);
    const toSession = session.stdio[3] as Writable;
    const fromSession = lineReader(session.stdio[4] as Readable);
    const exited = new Promise<string>((resolve) =>
      session!.once('exit', (code, signal) => resolve(`the session ended (${signal ?? `status ${code}`})`)),
    );
    /** Waits for the session's answer to an instruction, serving its requests meanwhile. */
    const answer = async (expected: string, from: number): Promise<string | undefined> => {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve(`no end after ${BLOCK_TIMEOUT_MS / 1000} s`), BLOCK_TIMEOUT_MS);
      });
      try {
        for (;;) {
          const said = await Promise.race([fromSession(), exited, timeout]);
          if (said === expected) return undefined;
          if (said === 'restart') toSession.write(`${await restarted()}\n`);
          else if (said.startsWith('printed '))
            toSession.write(output.slice(from).includes(said.slice('printed '.length)) ? 'yes\n' : 'no\n');
          else return said;
        }
      } finally {
        clearTimeout(timer);
      }
    };
    const restarted = async () => {
      try {
        await service.stop();
        await service.start();
        return 'ready';
      } catch (err) {
        return (err as Error).message.replace(/\n/g, ' ');
      }
    };
    for (const [i, block] of blocks.entries()) {
      const script = path.join(scriptDir, `block-${i + 1}.sh`);
      await writeFile(script, `${scripts[i]}\n`);
      const from = output.length;
      const started = Date.now();
      toSession.write(`${script}\n`);
      const problem = await answer('done', from);
      if (problem) throw failure(String(block.line), `block ${i + 1} of ${blocks.length} failed: ${problem}`, block.text, from);
      timings.push({ line: block.line, ms: Date.now() - started });
    }
    const from = output.length;
    toSession.write('end\n');
    const problem = await answer('finished', from);
    if (problem) throw failure('end', `after the last block: ${problem}`, undefined, from);
    return timings;
  } finally {
    if (session?.pid !== undefined) {
      try {
        process.kill(-session.pid, 'SIGTERM');
      } catch {
        // the group has already ended
      }
    }
    await service.stop();
    await rm(dir, { recursive: true, force: true });
    await rm(scriptDir, { recursive: true, force: true });
  }
}
