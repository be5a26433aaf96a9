import { existsSync } from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { packageRoot } from '../paths.js';

/** Where `npm run build` writes the agent console (vite.console.config.ts). */
export const CONSOLE_DIR = path.join(packageRoot(import.meta.dirname), 'dist', 'console');

/** A Host header we are willing to repeat inside the CSP (no spaces, quotes or semicolons). */
const HOST = /^[A-Za-z0-9.-]+(?::\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](?::\d{1,5})?$/;

/**
 * The console's policy (docs/console.md): its own files only, no inline script or style and
 * no eval; the realtime socket on this same host (named as ws:/wss: explicitly, since not
 * every browser counts them as 'self'); images also from data: and blob: (attachments fetched
 * with the agent's token are shown from blob: URLs); never framed.
 */
export function consoleCsp(host: string | undefined): string {
  const sockets = host && HOST.test(host) ? ` ws://${host} wss://${host}` : '';
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self'",
    "img-src 'self' data: blob:",
    `connect-src 'self'${sockets}`,
    "font-src 'self'",
    "object-src 'none'",
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
  ].join('; ');
}

const NOT_BUILT = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The agent console is not built</h1><p>This service is running from its sources without a build of the console.
Run <code>npm run build</code> (or <code>npm start</code>, which builds first) and restart the service.</p></body></html>`;

/**
 * `GET /app` and `/app/*`: the agent console, a single-page app. Hashed files under
 * `assets/` are cached for good; every other path answers index.html, so a reload on a
 * client route (`/app/c/42`, `/app/settings/users`) works.
 */
export const consoleRoutes: FastifyPluginAsync<{ dir?: string }> = async (app, options) => {
  const root = options.dir ?? CONSOLE_DIR;
  const built = existsSync(path.join(root, 'index.html'));
  if (built) await app.register(fastifyStatic, { root, serve: false });

  app.addHook('onRequest', (request, reply, done) => {
    reply
      .header('content-security-policy', consoleCsp(request.host))
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .header('cross-origin-opener-policy', 'same-origin');
    done();
  });

  const page = (request: FastifyRequest, reply: FastifyReply) => {
    const rest = (request.params as { '*'?: string })['*'] ?? '';
    if (!built || !existsSync(path.join(root, 'index.html'))) {
      return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    }
    if (rest.startsWith('assets/')) return reply.sendFile(rest, root, { immutable: true, maxAge: '365d' });
    return reply.header('cache-control', 'no-cache').sendFile('index.html', root, { cacheControl: false });
  };
  const schema = { hide: true };
  app.get('/', { schema }, page);
  app.get('/*', { schema }, page);
};
