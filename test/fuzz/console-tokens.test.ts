import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { servedType } from '../../src/attachments/content-headers.js';
import { REFRESH_COOKIE, REFRESH_PATH } from '../../src/auth/refresh-cookie.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';
import { multipartBody } from '../helpers/multipart.js';
import { runs } from './fuzz-scale.js';

/**
 * The console's two defences under hostile input (seeded fast-check, like hostile-input.test.ts;
 * docs/security.md, "The console's tokens and files"): whatever type a sender declares, the
 * content route never serves a type a browser would run; whatever `Cookie` and `Sec-Fetch-Site`
 * a request makes up, the refresh route answers a token only for the genuine cookie of a live
 * session, and the cookie opens no other route.
 */
const SEED = 20261126;
const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);

/** What the content route may answer with: the inert types, each as it is served. */
const INERT = new Set([
  'application/pdf',
  'text/plain; charset=utf-8',
  'text/csv',
  'application/zip',
  'application/msword',
  'application/vnd.ms-excel',
  'application/vnd.ms-powerpoint',
  'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  'application/vnd.oasis.opendocument.text',
  'application/vnd.oasis.opendocument.spreadsheet',
  'application/vnd.oasis.opendocument.presentation',
  'application/octet-stream',
]);
const RASTER = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);
/** Types a browser renders as a document or runs (an XML type is any `…+xml`, whatever its family). */
const SCRIPTABLE = /html|svg|xml|javascript|ecmascript|css|x-shockwave|multipart/;

/** Types a sender may declare: real ones in odd spellings, scriptable ones in disguise, noise. */
const declaredType = fc.oneof(
  fc.constantFrom(
    'text/html',
    'TEXT/HTML',
    'text/html; charset=utf-8',
    ' text/html',
    'image/svg+xml',
    'IMAGE/SVG+XML; charset=utf-8',
    'application/xhtml+xml',
    'application/xml',
    'text/xml',
    'text/javascript',
    'application/javascript',
    'application/ecmascript',
    'text/css',
    'application/json',
    'image/png',
    'Image/PNG',
    'image/jpeg; q=1',
    'image/webp',
    'image/bmp',
    'audio/mpeg',
    'video/webm',
    'audio/x+xml',
    'video/vnd.foo+xml',
    'audio/html',
    'application/pdf',
    'text/plain',
    'text/csv',
    'application/zip',
    'multipart/x-mixed-replace; boundary=x',
    'application/x-shockwave-flash',
    'application/octet-stream',
    '',
    '/',
    'image/',
    '*/*',
  ),
  fc.string({ maxLength: 40 }),
  fc
    .tuple(
      fc.constantFrom('text', 'image', 'audio', 'video', 'application', 'x'),
      fc.stringMatching(/^[a-z0-9][a-z0-9.+-]{0,20}$/),
      fc.constantFrom('', '; charset=utf-8', ';x=y'),
    )
    .map(([a, b, c]) => `${a}/${b}${c}`),
);

/** A type that may be served inline: raster images, audio and video, nothing else. */
const mayShow = (type: string) => RASTER.has(type) || (/^(audio|video)\/[a-z0-9][a-z0-9!#$&^_.+-]*$/.test(type) && !SCRIPTABLE.test(type));

describe('the content route under hostile declared types', () => {
  it('serves only raster images, audio and video inline, the inert types as downloads, anything else as octet-stream', () => {
    fc.assert(
      fc.property(declaredType, (declared) => {
        const served = servedType(declared);
        const what = `${JSON.stringify(declared)} → ${JSON.stringify(served)}`;
        expect(served.inline ? mayShow(served.type) : INERT.has(served.type), what).toBe(true);
        expect(served.type, what).not.toMatch(SCRIPTABLE);
      }),
      { seed: SEED, numRuns: runs(2000) },
    );
  });

  it('uploads declaring any type are served with nosniff, sandbox and a type no browser runs', async () => {
    await fc.assert(
      fc.asyncProperty(declaredType, async (declared) => {
        const body = multipartBody({ filename: 'f', contentType: declared, bytes: '<script>alert(1)</script>' });
        const up = await ctx.app.inject({
          method: 'POST',
          url: '/v1/attachments',
          headers: { ...tenant.headers, ...body.headers },
          payload: body.payload,
        });
        // A declared type the multipart parser cannot read is refused: no file, no answer to check.
        if (up.statusCode !== 201) return expect(up.statusCode, up.body).toBeLessThan(500);
        const res = await ctx.app.inject({ method: 'GET', url: `/v1/attachments/${up.json().data.id}/content`, headers: tenant.headers });
        const what = `${JSON.stringify(declared)} → ${res.headers['content-type']}`;
        expect(res.statusCode, what).toBe(200);
        expect(res.headers['x-content-type-options'], what).toBe('nosniff');
        expect(res.headers['content-security-policy'], what).toBe('sandbox');
        const type = String(res.headers['content-type']);
        const inline = String(res.headers['content-disposition']).startsWith('inline');
        expect(inline ? mayShow(type) : INERT.has(type), what).toBe(true);
      }),
      { seed: SEED, numRuns: runs(60) },
    );
  });
});

const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
const login = await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password, remember: true } });
const genuine = /^inbox_refresh=([^;]+)/.exec(String(login.headers['set-cookie']))![1]!;
const access = login.json().access_token as string;

describe('the refresh route under hostile cookies', () => {
  const claims = JSON.parse(Buffer.from(genuine.split('.')[1]!, 'base64url').toString()) as Record<string, unknown>;
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const signedWith = (secret: string, body: object) => {
    const head = b64({ alg: 'HS256', typ: 'JWT' });
    const payload = b64(body);
    return `${head}.${payload}.${createHmac('sha256', secret).update(`${head}.${payload}`).digest('base64url')}`;
  };
  const forged = [
    access,
    signedWith('another-secret', claims),
    `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`,
    ctx.app.jwt.sign({ ...claims, sub: '999999' }),
    ctx.app.jwt.sign({ ...claims, jti: '00000000-0000-4000-8000-000000000000' }),
    ctx.app.jwt.sign({ ...claims, use: 'access' }),
    ctx.app.jwt.sign({ ...claims, jti: 'not-a-uuid' }),
    ctx.app.jwt.sign({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 }),
    `${genuine}x`,
    genuine.replace(/\.[^.]+$/, '.AAAA'),
  ];
  const value = fc.oneof(
    fc.constant(genuine),
    fc.constantFrom(...forged),
    fc.string({ maxLength: 80 }),
    fc.stringMatching(/^[\w-]{1,20}\.[\w-]{1,40}\.[\w-]{0,20}$/),
  );
  const cookieHeader = fc.oneof(
    value.map((v) => `${REFRESH_COOKIE}=${v}`),
    fc.tuple(value, value).map(([a, b]) => `${REFRESH_COOKIE}=${a}; ${REFRESH_COOKIE}=${b}`),
    fc.tuple(fc.string({ maxLength: 20 }), value).map(([junk, v]) => `${junk}; ${REFRESH_COOKIE}=${v}; theme=dark`),
    fc.string({ maxLength: 120 }),
  );
  /** The value of the first `inbox_refresh` pair in a Cookie header (the one a server reads). */
  const firstRefreshCookie = (header: string) =>
    header
      .split(';')
      .filter((pair) => pair.includes('='))
      .map((pair) => [pair.slice(0, pair.indexOf('=')).trim(), pair.slice(pair.indexOf('=') + 1).trim()])
      .find(([name]) => name === REFRESH_COOKIE)?.[1];
  const site = fc.option(fc.constantFrom('same-origin', 'same-site', 'cross-site', 'none', '', 'SAME-ORIGIN'), { nil: undefined });

  it('answers a token only for the genuine cookie from the same origin, never 5xx; the cookie opens no other route', async () => {
    const seen = new Set<number>();
    await fc.assert(
      fc.asyncProperty(cookieHeader, site, async (cookie, fetchSite) => {
        const headers: Record<string, string> = { cookie };
        if (fetchSite !== undefined) headers['sec-fetch-site'] = fetchSite;
        const res = await ctx.app.inject({ method: 'POST', url: REFRESH_PATH, headers });
        const what = `${JSON.stringify(headers)} → ${res.statusCode}`;
        seen.add(res.statusCode);
        expect([200, 401, 403], what).toContain(res.statusCode);
        if (res.statusCode === 200) {
          expect(firstRefreshCookie(cookie), what).toBe(genuine);
          expect(fetchSite === undefined || fetchSite === 'same-origin', what).toBe(true);
          expect(res.json().data.id, what).toBe(user.id);
        }
        const other = await ctx.app.inject({ method: 'GET', url: '/api/user/user', headers });
        expect(other.statusCode, `GET /api/user/user ${what}`).toBe(401);
      }),
      { seed: SEED, numRuns: runs(150) },
    );
    // The cases reached every answer, so none of the rules above held vacuously.
    expect([...seen].sort()).toEqual([200, 401, 403]);
  });
});
