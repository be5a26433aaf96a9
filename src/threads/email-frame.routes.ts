import { hkdfSync } from 'node:crypto';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { sql } from 'kysely';
import { Type } from 'typebox';
import { linkKey, signedLink } from '../attachments/signed-links.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import { hmacSha256, safeEqual } from '../crypto/hmac.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { BigId } from '../http/ids.js';
import { Envelope, Timestamp } from '../http/schemas.js';
import { visibleThreads } from './visibility.js';

/** How long a frame link works: long enough to open the thread, short enough to leak little. */
const FRAME_LINK_SECONDS = 300;

const frameKey = (secretKey: Buffer) => Buffer.from(hkdfSync('sha256', secretKey, Buffer.alloc(0), 'inbox e-mail frame links', 32));
const signature = (key: Buffer, id: number, expires: number) => hmacSha256(key, `${id}.${expires}`).toString('hex');

/**
 * The policy of a mail's frame (docs/email.md, "What an agent sees"): a sandbox without
 * scripts or same-origin, nothing loaded but inline styles, inline images and the mail's own
 * parts (`attachments`: the service's attachment path, which the `cid:` images link to), and
 * remote images (`images=1`) only after the agent asked for them; framed by the console only.
 */
export function frameCsp(images: boolean, attachments: string): string {
  return [
    'sandbox allow-popups allow-popups-to-escape-sandbox',
    "default-src 'none'",
    `img-src data: ${attachments}${images ? ' https: http:' : ''}`,
    "style-src 'unsafe-inline'",
    'font-src data:',
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'self'",
  ].join('; ');
}

const FRAME_STYLE =
  'body{font:14px/1.45 system-ui,sans-serif;margin:8px;color:#1d2230;overflow-wrap:anywhere}img{max-width:100%;height:auto}';
/** The quoted history the sanitizer marked (channels/email-html.ts), folded until the agent asks for it. */
const FOLD_QUOTED = '[data-quoted=block],[data-quoted=from],[data-quoted=from]~*{display:none}';

/**
 * An e-mail's sanitized HTML as a page of its own, for the console's frame: its own CSP rather
 * than the console's (a srcdoc frame would inherit the console's, which allows neither the
 * mail's inline styles nor, after a click, its remote images). The frame cannot send the
 * agent's token, so the console asks for a link signed for five minutes.
 */
export const emailFrameRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  const key = frameKey(deps.secretKey);
  // A CSP source: `;` and `,` would end it (a URL path may hold them), so they are percent-encoded.
  const attachmentsSource = `${deps.config.publicUrl}/v1/attachments/`.replaceAll(';', '%3B').replaceAll(',', '%2C');
  const params = Type.Object({ id: Type.With(BigId, { description: 'the message id' }) });

  app.post(
    '/messages/:id/html-link',
    {
      preValidation: requireAuth(deps),
      schema: {
        summary: "A link to an e-mail message's HTML",
        description:
          'For a frame: the sanitized HTML served with its own `content-security-policy` (a sandbox, no script, remote images only with `images=1`), without a credential for 5 minutes. A message without HTML, or one the caller does not see → 404.',
        params,
        response: { 200: Envelope(Type.Object({ url: Type.String(), expiresAt: Timestamp })) },
      },
    },
    async (request) => {
      const reader = tenantOf(request);
      const row = await deps.db
        .selectFrom('messages')
        .innerJoin('threads', 'threads.id', 'messages.thread_id')
        .select('messages.id')
        .where('messages.id', '=', request.params.id)
        .where('messages.workspace_id', '=', reader.workspaceId)
        .where('messages.html', 'is not', null)
        .where(visibleThreads(reader))
        .executeTakeFirst();
      if (!row) throw errors.notFound('message');
      const expires = Math.floor(deps.now().getTime() / 1000) + FRAME_LINK_SECONDS;
      const url = `${deps.config.publicUrl}/v1/messages/${row.id}/html?expires=${expires}&signature=${signature(key, row.id, expires)}`;
      return envelope(request, { url, expiresAt: new Date(expires * 1000).toISOString() });
    },
  );

  app.get(
    '/messages/:id/html',
    {
      schema: {
        summary: "An e-mail message's HTML, for a frame",
        description:
          'By a link from `POST /v1/messages/:id/html-link`; `images=1` lets remote images load, `quoted=1` shows the quoted history the page otherwise folds. Wrong or expired → 401.',
        params,
        querystring: Type.Object({
          expires: Type.String({ description: 'unix seconds, from the link' }),
          signature: Type.String({ description: 'from the link' }),
          images: Type.Optional(Type.Literal('1', { description: '1: remote images load' })),
          quoted: Type.Optional(Type.Literal('1', { description: '1: the quoted history shows (else it is folded)' })),
        }),
        response: {
          200: { description: 'the page', content: { 'text/html': { schema: Type.String() } } },
        },
      },
    },
    async (request, reply) => {
      const { id } = request.params;
      const { expires, signature: given, images, quoted } = request.query;
      const at = /^\d{1,15}$/.test(expires) ? Number(expires) : Number.NaN;
      if (!Number.isSafeInteger(at) || at * 1000 <= deps.now().getTime() || !safeEqual(given, signature(key, id, at)))
        throw errors.unauthorized('this link is wrong or has expired');
      const row = await deps.db.selectFrom('messages').select(['html', 'quoted_text']).where('id', '=', id).executeTakeFirst();
      if (!row?.html) throw errors.notFound('message');
      let html = row.html.includes(' data-cid="') ? await linkInlineParts(deps, id, row.html) : row.html;
      if (images) html = html.replace(/\sdata-remote-src=/g, ' src=');
      // Folded only where the plain part's reply parser also found history: a forward (Gmail,
      // Apple Mail and Outlook mark it as they mark a reply) is what the sender sent, and shows.
      const fold = !quoted && row.quoted_text !== null;
      const page = `<!doctype html><html><head><meta charset="utf-8"><base target="_blank"><style>${FRAME_STYLE}${fold ? FOLD_QUOTED : ''}</style></head><body>${html}</body></html>`;
      return reply
        .header('content-type', 'text/html; charset=utf-8')
        .header('content-security-policy', frameCsp(images === '1', attachmentsSource))
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        .header('cache-control', 'private, no-store')
        .send(page);
    },
  );
};

/**
 * The mail's `cid:` images (kept by the sanitizer as `data-cid`) linked to the parts of **this
 * message** with that Content-ID, by signed links (the frame sends no credential); a cid no
 * part of this message carries shows nothing. Only `<img>` tags are read: text cannot hold one.
 */
async function linkInlineParts(deps: Deps, messageId: number, html: string): Promise<string> {
  const parts = await deps.db
    .selectFrom('attachments')
    .select(['id', sql<string>`source->>'cid'`.as('cid')])
    .where('message_id', '=', messageId)
    .where(sql<boolean>`source->>'cid' IS NOT NULL`)
    .orderBy('id')
    .execute();
  const byCid = new Map<string, number>();
  for (const p of parts) if (!byCid.has(p.cid)) byCid.set(p.cid, Number(p.id));
  const link = { publicUrl: deps.config.publicUrl, key: linkKey(deps.secretKey), now: deps.now() };
  return html.replace(/<img\b[^>]*>/g, (tag) =>
    tag.replace(/\sdata-cid="([^"]*)"/, (_m, cid: string) => {
      const part = byCid.get(cid);
      return part === undefined ? '' : ` src="${signedLink(link, part).replaceAll('&', '&amp;')}"`;
    }),
  );
}
