import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `packages/client` is a package of its own: its sources reach nothing outside it, `npm pack`
 * builds it into a tarball of compiled modules and declarations, and an empty project that
 * installs that tarball (offline: it has no dependencies) imports it and type-checks against
 * it with `skipLibCheck: false`, `types: []` and a bare ES lib.
 */
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, '../..');
const pkgDir = path.join(root, 'packages/client');
const manifest = JSON.parse(readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as Record<string, unknown>;
const work = mkdtempSync(path.join(tmpdir(), 'inbox-client-pack-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// npm without the network: nothing here may need the registry.
const npmEnv = {
  ...process.env,
  npm_config_offline: 'true',
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
};
const packed = JSON.parse((await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: pkgDir, env: npmEnv })).stdout) as {
  filename: string;
  files: { path: string }[];
}[];
const tarball = path.join(work, packed[0]!.filename);
const consumer = path.join(work, 'consumer');
mkdirSync(consumer);
writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
await run('npm', ['install', '--offline', '--no-package-lock', tarball], { cwd: consumer, env: npmEnv });
const installed = path.join(consumer, 'node_modules/@inbox/client');

describe('the client package', () => {
  it('declares what a registry needs and depends on nothing', () => {
    expect(manifest).toMatchObject({
      name: '@inbox/client',
      type: 'module',
      engines: { node: expect.any(String) },
      files: ['dist', 'README.md'],
    });
    expect(manifest.version).toBe(JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).version);
    expect(manifest.private).toBeUndefined();
    expect(manifest.exports).toEqual({
      '.': { types: './dist/index.d.ts', default: './dist/index.js' },
      './package.json': './package.json',
    });
    for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies']) expect(manifest[field], field).toBeUndefined();
  });

  it('has sources that import nothing but each other (no server code, no package)', () => {
    const srcDir = path.join(pkgDir, 'src');
    const outside: string[] = [];
    for (const file of readdirSync(srcDir).filter((f) => f.endsWith('.ts'))) {
      const info = ts.preProcessFile(readFileSync(path.join(srcDir, file), 'utf8'), true, true);
      for (const ref of [...info.importedFiles, ...info.referencedFiles, ...info.typeReferenceDirectives, ...info.libReferenceDirectives]) {
        const target = path.resolve(srcDir, ref.fileName);
        if (!ref.fileName.startsWith('./') || path.dirname(target) !== srcDir) outside.push(`${file} → ${ref.fileName}`);
      }
    }
    expect(outside).toEqual([]);
  });

  it('packs compiled modules and declarations only', () => {
    const files = packed[0]!.files.map((f) => f.path).sort();
    expect(files).toContain('dist/index.js');
    expect(files).toContain('dist/index.d.ts');
    expect(files).toContain('dist/webhooks.d.ts');
    expect(files.filter((f) => !/^dist\/[a-z-]+\.(js|d\.ts)$/.test(f))).toEqual(['README.md', 'package.json']);
  });

  it('installs into an empty project, offline, and imports there', async () => {
    const script = `import * as client from '@inbox/client';
const inbox = client.tenantClient({ baseUrl: 'http://127.0.0.1:9' });
console.log(JSON.stringify({ exports: Object.keys(client).sort(), threads: typeof inbox.threads, ops: typeof client.operatorClient({ baseUrl: '' }).tenants }));`;
    const { stdout } = await run(process.execPath, ['--input-type=module', '-e', script], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({
      exports: ['InboxClientError', 'operatorClient', 'retryAfterMs', 'tenantClient', 'verifyWebhook'],
      threads: 'function',
      ops: 'function',
    });
    // Only the package itself came to node_modules: nothing of the server followed it.
    expect(readdirSync(path.join(consumer, 'node_modules')).filter((d) => !d.startsWith('.'))).toEqual(['@inbox']);
  });

  it('type-checks a consumer with skipLibCheck false, types [] and a bare ES lib', () => {
    writeFileSync(
      path.join(consumer, 'index.ts'),
      `import { tenantClient, operatorClient, verifyWebhook, InboxClientError, type Label, type Message, type WebhookEndpointWithSecret } from '@inbox/client';
const inbox = tenantClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k', timeoutMs: 5000, retries: 1 });
export async function run(raw: Uint8Array, headers: Record<string, string | string[] | undefined>): Promise<string> {
  const sent: Message = await inbox.reply(1, { text: 'hi' }, { idempotencyKey: 'k-1' });
  const endpoint: WebhookEndpointWithSecret = await inbox.createWebhookEndpoint({ url: 'https://x.example/', events: ['message.created'] });
  await inbox.updateConnection(1, { credentials: null });
  for await (const t of inbox.threads({ limit: 10 })) void t.lastMessagePreview;
  for await (const t of inbox.threads({ status: ['open', 'pending'], assigneeId: 'none', label: 'vip' })) void t.unreadCount;
  for await (const m of inbox.searchMessages({ q: 'refund' })) void m.kind;
  const labels: Label[] = await inbox.labels();
  void labels;
  await inbox.updateThread(1, { assigneeId: null, labels: ['vip'] });
  // @ts-expect-error a thread's statuses are a closed list
  await inbox.updateThread(1, { status: 'closed' });
  for await (const w of operatorClient({ baseUrl: '', adminKey: 'a' }).tenants()) void w.appId;
  // @ts-expect-error an undeclared body field is a type error, as it is a 422 at run time
  await inbox.reply(1, { text: 'hi', internal: true });
  // @ts-expect-error statuses are a closed list
  const s: Message['status'] = 'sending';
  void s;
  const verified = await verifyWebhook<{ id: number }>({ body: raw, headers, secret: [endpoint.secret, 'whsec_old'] });
  const id: number = verified.event.data.id;
  return sent.status + verified.scheme + String(id) + String(new InboxClientError('c', 1, 'm').retryAfter);
}
`,
    );
    const program = ts.createProgram([path.join(consumer, 'index.ts')], {
      strict: true,
      noEmit: true,
      skipLibCheck: false,
      types: [],
      lib: ['lib.es2022.d.ts'],
      target: ts.ScriptTarget.ES2022,
      module: ts.ModuleKind.NodeNext,
      moduleResolution: ts.ModuleResolutionKind.NodeNext,
      typeRoots: [],
    });
    const diagnostics = ts
      .getPreEmitDiagnostics(program)
      .map((d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
    expect(diagnostics).toEqual([]);
    // Every declaration came from the installed tarball, none from the repository.
    const outside = program
      .getSourceFiles()
      .map((f) => f.fileName)
      .filter((f) => !f.startsWith(consumer) && !/\/typescript\/lib\/lib\./.test(f));
    expect(outside).toEqual([]);
    expect(program.getSourceFiles().some((f) => f.fileName.startsWith(`${installed}/dist/`))).toBe(true);
  });
});
