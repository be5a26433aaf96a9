import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';
import { ROLES } from '../../src/main.js';
import { createTestDatabase } from '../helpers/db.js';
import { runDocBlocks } from '../helpers/docs-session.js';
import { shellBlocks } from '../helpers/shell-blocks.js';

/**
 * Every ```sh block of README.md and docs/*.md runs, in order, against a real service (see
 * test/helpers/docs-session.ts for how a reader's terminals are reproduced, and
 * test/helpers/shell-blocks.ts for the few comment lines that steer it). A command a
 * newcomer copies cannot rot silently: a failing command, an HTTP error the docs do not
 * state, an unset variable or a `…` placeholder fails the file's test, which prints the block
 * and what it printed. DOCS_TRANSCRIPT=1 prints every session as it runs.
 */

const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');

const FILES = [
  'README.md',
  ...readdirSync(path.join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`),
];

// One file at a time: a service, a shell and `npx inbox` are mostly CPU (about 80 s of it for
// the whole file), and two files side by side gained nothing measurable on a busy 2-core machine.
describe('the sh blocks of the docs run against a real service', () => {
  for (const file of FILES) {
    const blocks = shellBlocks(read(file));
    if (blocks.length === 0) continue;
    it(`${file} (${blocks.length} blocks)`, async () => {
      // A database of its own: each file's reader starts from a fresh install.
      const database = await createTestDatabase();
      try {
        const timings = await runDocBlocks(file, blocks, database.url);
        if (process.env.DOCS_TRANSCRIPT) {
          process.stderr.write(`${file}: ${timings.map((t) => `:${t.line} ${(t.ms / 1000).toFixed(1)} s`).join(', ')}\n`);
        }
      } finally {
        await database.drop();
      }
    }, 240_000);
  }
});

/**
 * Commands no test can run stay in ```text blocks, and are checked here another way. Only
 * these three: any other block of commands is a ```sh block, and runs above.
 */
const NOT_RUN = ['npm install && npm start', 'npx inbox serve --role all', 'docker build -t inbox .'];

function textBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```text\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
}
const readmeBlock = (firstLine: string) => textBlocks(read('README.md')).find((b) => b.startsWith(firstLine))!;

describe('commands the docs keep out of sh blocks', () => {
  it('are the three of the README, and no shell block hides under another name', () => {
    const found = FILES.flatMap((f) => textBlocks(read(f)).map((b) => `${f}: ${b.split('\n')[0]!}`));
    expect(found.map((l) => l.replace(/\s+#.*$/, ''))).toEqual(NOT_RUN.map((l) => `README.md: ${l}`));
    for (const file of FILES) expect(read(file), file).not.toMatch(/^```(?:bash|shell|console|zsh)\s*$/m);
  });

  it('"Two commands": `npm start` serves on 127.0.0.1:3000 (the runner starts the same `serve`); `npm test` is this suite', () => {
    // npm install would change the checkout this suite runs from, and npm test would run it again.
    const block = readmeBlock(NOT_RUN[0]!);
    const scripts = JSON.parse(read('package.json')).scripts as Record<string, string>;
    expect(scripts.start).toMatch(/\/cli\.js serve$/);
    expect(scripts.test).toContain('vitest run');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'inbox-readme-'));
    const config = loadConfig({}, dir);
    expect(block).toContain(`serves http://${config.host}:${config.port} on an embedded PostgreSQL in ./.data`);
    expect([config.databaseUrl, config.dataDir]).toEqual([undefined, path.join(dir, '.data')]);
  });

  it('"Scaling out": each `inbox serve --role` is a server for a terminal of its own; the roles are the CLI\'s', () => {
    const roles = [...readmeBlock(NOT_RUN[1]!).matchAll(/npx inbox serve --role (\w+)/g)].map((m) => m[1]);
    expect(roles).toEqual(ROLES);
  });

  it('"Running in Docker": no container engine here; the image has what the commands use, and their secrets make a production configuration', () => {
    const block = readmeBlock(NOT_RUN[2]!);
    const dockerfile = read('Dockerfile');
    // The image has no embedded PostgreSQL: the block names the database it runs against.
    expect(block).toContain('docker run -p 3000:3000 -e DATABASE_URL=');
    expect(dockerfile).toMatch(/^EXPOSE 3000$/m);
    expect(dockerfile).toMatch(/^ENV .*\bHOST=0\.0\.0\.0 PORT=3000\b/m);
    // `docker exec <container> node bin/inbox.js create-workspace …` (the README, below the block)
    expect(dockerfile).toMatch(/^COPY bin \.\/bin$/m);
    expect(dockerfile).toMatch(/^ENTRYPOINT \["\/usr\/bin\/tini", "--", "node", "bin\/inbox\.js"\]\nCMD \["serve"\]$/m);
    expect(read('README.md')).toContain('`docker exec <container> node bin/inbox.js create-workspace --name Acme`');

    // The block's secrets, generated as it generates them, are what NODE_ENV=production (the
    // image's) needs; without them the start is refused, which is why the block passes them.
    const dir = mkdtempSync(path.join(os.tmpdir(), 'inbox-readme-'));
    const generate = block.split('\n').find((l) => l.startsWith('openssl rand'))!;
    execFileSync('bash', ['-euo', 'pipefail', '-c', generate], { cwd: dir });
    // The secrets go in as files (-v "$PWD:/run/secrets:ro"): here, the files just generated.
    const env: Record<string, string> = { NODE_ENV: 'production' };
    for (const [, name, file] of block.matchAll(/-e (\w+_FILE)=\/run\/secrets\/([\w-]+)/g)) {
      env[name!] = path.join(dir, file!);
    }
    expect(block).toContain('-v "$PWD:/run/secrets:ro"');
    expect(Object.keys(env)).toEqual(['NODE_ENV', 'INBOX_JWT_SECRET_FILE', 'INBOX_SECRET_KEY_FILE', 'INBOX_ADMIN_API_KEY_FILE']);
    expect(loadConfig(env, dir).production).toBe(true);
    expect(() => loadConfig({ NODE_ENV: 'production' }, dir)).toThrow(ConfigError);
  });
});
