import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import ts from 'typescript';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `inbox/client` ships declarations a program compiles against without the server's packages:
 * emitted with the build's own compiler options, they import nothing but each other, and a
 * consumer with `skipLibCheck: false`, `types: []`, a bare ES lib and no node_modules but the
 * package itself type-checks against them.
 */
const root = path.resolve(import.meta.dirname, '../..');
const work = mkdtempSync(path.join(tmpdir(), 'inbox-client-dts-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

function diagnostics(list: readonly ts.Diagnostic[]): string[] {
  return list.map((d) => `${d.file ? path.basename(d.file.fileName) : ''}: ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`);
}

/** Emits the client's declarations as `npm run build` does (tsconfig.build.json), into `outDir`. */
function emitClientDeclarations(outDir: string): void {
  const parsed = ts.getParsedCommandLineOfConfigFile(
    path.join(root, 'tsconfig.build.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  )!;
  const program = ts.createProgram([path.join(root, 'src/client/client.ts')], {
    ...parsed.options,
    outDir,
    rootDir: root,
    declaration: true,
    emitDeclarationOnly: true,
    sourceMap: false,
    noEmit: false,
  });
  const result = program.emit();
  expect(diagnostics(ts.getPreEmitDiagnostics(program).concat(result.diagnostics))).toEqual([]);
}

const dist = path.join(work, 'dist');
emitClientDeclarations(dist);
const clientDir = path.join(dist, 'src/client');

describe('the client declarations', () => {
  it('are emitted only for the client and import nothing but each other', () => {
    // Only the client's own modules were pulled into the emit: nothing of the server.
    const emitted = readdirSync(dist, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => path.relative(dist, path.join(e.parentPath, e.name)));
    expect(
      emitted.every((f) => f.startsWith(`src${path.sep}client${path.sep}`)),
      emitted.join(', '),
    ).toBe(true);

    const seen = new Set<string>();
    const outside: string[] = [];
    const visit = (file: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
      for (const ref of [...info.importedFiles, ...info.referencedFiles, ...info.typeReferenceDirectives, ...info.libReferenceDirectives]) {
        const spec = ref.fileName;
        if (!spec.startsWith('./')) {
          outside.push(`${path.basename(file)} → ${spec}`);
          continue;
        }
        visit(path.join(path.dirname(file), spec.replace(/\.js$/, '.d.ts')));
      }
    };
    visit(path.join(clientDir, 'client.d.ts'));
    expect(outside).toEqual([]);
    expect([...seen].map((f) => path.basename(f)).sort()).toEqual([
      'client.d.ts',
      'operator.d.ts',
      'request.d.ts',
      'tenant.d.ts',
      'types.d.ts',
    ]);
  });

  it('compile in a consumer with skipLibCheck false, types [] and no server package installed', () => {
    const consumer = path.join(work, 'consumer');
    const pkg = path.join(consumer, 'node_modules/inbox');
    mkdirSync(path.join(pkg, 'dist/src'), { recursive: true });
    cpSync(clientDir, path.join(pkg, 'dist/src/client'), { recursive: true });
    const manifest = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { exports: Record<string, unknown> };
    writeFileSync(
      path.join(pkg, 'package.json'),
      JSON.stringify({
        name: 'inbox',
        type: 'module',
        exports: { './client': { types: (manifest.exports['./client'] as { types: string }).types } },
      }),
    );
    writeFileSync(path.join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', type: 'module' }));
    writeFileSync(
      path.join(consumer, 'index.ts'),
      `import { tenantClient, operatorClient, InboxClientError, type Label, type Message, type WebhookEndpointWithSecret } from 'inbox/client';
const inbox = tenantClient({ baseUrl: 'http://127.0.0.1:3000', apiKey: 'k' });
export async function run(): Promise<string> {
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
  return sent.status + endpoint.secret + String(new InboxClientError('c', 1, 'm').status);
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
    expect(diagnostics(ts.getPreEmitDiagnostics(program))).toEqual([]);
    // Nothing was resolved from outside the consumer's directory (the server's node_modules).
    const outside = program
      .getSourceFiles()
      .map((f) => f.fileName)
      .filter((f) => !f.startsWith(consumer) && !/\/typescript\/lib\/lib\./.test(f));
    expect(outside).toEqual([]);
  });
});
