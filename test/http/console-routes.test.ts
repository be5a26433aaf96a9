import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { consoleCsp, consoleRoutes } from '../../src/http/console.routes.js';

async function appServing(dir: string) {
  const app = Fastify();
  await app.register(consoleRoutes, { prefix: '/app', dir });
  return app;
}

describe('/app, the agent console', () => {
  it('answers index.html for client routes and the hashed file for assets, each under the CSP', async () => {
    const dir = await mkdtemp(path.join(tmpdir(), 'console-'));
    await mkdir(path.join(dir, 'assets'));
    await writeFile(path.join(dir, 'index.html'), '<!doctype html><title>Inbox</title>');
    await writeFile(path.join(dir, 'assets', 'index-abc.js'), 'console.log(1)');
    const app = await appServing(dir);
    for (const url of ['/app', '/app/', '/app/c/42', '/app/settings/users']) {
      const res = await app.inject({ url, headers: { host: 'inbox.example.com' } });
      expect(res.statusCode, url).toBe(200);
      expect(res.body).toContain('<title>Inbox</title>');
      expect(res.headers['content-security-policy']).toBe(consoleCsp('inbox.example.com'));
      expect(res.headers['cache-control']).toBe('no-cache');
    }
    const js = await app.inject({ url: '/app/assets/index-abc.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toContain('javascript');
    expect(js.headers['cache-control']).toContain('immutable');
    expect(js.headers['content-security-policy']).toBeDefined();
    expect((await app.inject({ url: '/app/assets/missing.js' })).statusCode).toBe(404);
    // No way out of the build directory.
    expect((await app.inject({ url: '/app/assets/..%2f..%2fpackage.json' })).statusCode).not.toBe(200);
    await app.close();
  });

  it('answers a clear 503 page when the console was not built', async () => {
    const app = await appServing(path.join(tmpdir(), 'no-console-build-here'));
    const res = await app.inject({ url: '/app/c/1' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toContain('text/html');
    expect(res.body).toContain('npm run build');
    await app.close();
  });

  it("allows only its own files, the same host's sockets, and never inline script, eval or framing", () => {
    const csp = consoleCsp('127.0.0.1:3000');
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("style-src 'self';");
    expect(csp).toContain("connect-src 'self' ws://127.0.0.1:3000 wss://127.0.0.1:3000");
    expect(csp).toContain("img-src 'self' data: blob:");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("base-uri 'none'");
    expect(csp).toContain("form-action 'self'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    // A Host header that could smuggle a directive in is not repeated.
    expect(consoleCsp("evil.test; script-src 'unsafe-inline'")).toContain("connect-src 'self';");
  });
});
