import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { WIDGET_KEY } from '../connections/allowed-origins.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { NoContent } from '../http/schemas.js';
import { packageRoot } from '../paths.js';
import { findWidget, type Widget } from './livechat.queries.js';

/** The widget's files are not compiled: read from src/ even when this module runs from dist/src/. */
export const WIDGET_DIR = path.join(packageRoot(import.meta.dirname), 'src', 'livechat', 'widget');

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The hosted page: nothing but the widget, filling the page. */
function hostedPage(widget: Widget): string {
  const name = escapeHtml(widget.livechat_title ?? widget.name);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${name}</title>
</head>
<body style="margin:0;background:#f5f6f8">
<noscript><p style="font:16px system-ui,sans-serif;padding:16px">This chat needs JavaScript.</p></noscript>
<script src="/livechat/widget.js" data-widget-key="${escapeHtml(widget.external_account_id)}" data-mode="page" data-title="${name}"></script>
</body>
</html>
`;
}

/**
 * The hosted page runs only the service's own script and talks only to the service; it may be
 * framed by the widget's allowed origins (by any page when it allows any origin).
 */
function contentSecurityPolicy(widget: Widget): string {
  const ancestors = widget.allowed_origins.length === 0 ? '*' : ["'self'", ...widget.allowed_origins].join(' ');
  return [
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'unsafe-inline'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    `frame-ancestors ${ancestors}`,
  ].join('; ');
}

/**
 * `GET /livechat/widget.js`, the embeddable widget (plain JavaScript, no build step), and
 * `GET /livechat/:widgetKey`, a page hosting it for a widget (a link to share, or an iframe).
 */
export const widgetRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const script = await readFile(path.join(WIDGET_DIR, 'widget.js'), 'utf8');
  const etag = `"${sha256Hex(script).slice(0, 20)}"`;

  app.get(
    '/widget.js',
    {
      schema: {
        summary: 'The embeddable live chat widget script',
        description: 'The live chat widget: `<script src="…/livechat/widget.js" data-widget-key="wk_…" async></script>`',
        response: { 200: { content: { 'application/javascript': { schema: Type.String() } } }, 304: NoContent },
      },
    },
    async (request, reply) => {
      reply.header('etag', etag).header('cache-control', 'public, max-age=300').header('x-content-type-options', 'nosniff');
      // Any site may load it; what it may then call is decided per widget (allowedOrigins).
      reply.header('cross-origin-resource-policy', 'cross-origin');
      if (request.headers['if-none-match'] === etag) return reply.code(304).send(null);
      return reply.type('application/javascript; charset=utf-8').send(script);
    },
  );

  app.get(
    '/:widgetKey',
    {
      schema: {
        summary: 'A hosted live chat page for a widget',
        description: 'A page hosting the widget of this key, filling the page.',
        params: Type.Object({ widgetKey: Type.String({ minLength: 1, maxLength: 256, description: 'the widget key (wk_…)' }) }),
        response: { 200: { content: { 'text/html': { schema: Type.String() } } } },
      },
    },
    async (request, reply) => {
      const widget = WIDGET_KEY.test(request.params.widgetKey) ? await findWidget(deps.db, request.params.widgetKey) : undefined;
      if (!widget) throw errors.notFound('widget');
      reply
        .header('content-security-policy', contentSecurityPolicy(widget))
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'no-store');
      return reply.type('text/html; charset=utf-8').send(hostedPage(widget));
    },
  );
};
