import Fastify from 'fastify';
import { describe, expect, it, vi } from 'vitest';
import { requireAuth } from '../../src/auth/auth.js';
import { errorBody } from '../../src/http/envelope.js';
import type { AppError } from '../../src/http/errors.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

// Every route the app registers, collected as Fastify registers it (an onRoute hook on each
// instance), so a route added later is covered without anyone listing it here.
const { routes, fastifyWithRouteLog } = await vi.hoisted(() => import('../helpers/route-log.js'));
vi.mock('fastify', fastifyWithRouteLog);

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const reader = await makeTenant(ctx.deps, { scopes: ['read'] });
const writer = await makeTenant(ctx.deps, { scopes: ['write'] });

/** Routes of other credential families, each with guards of its own. */
const OTHER_FAMILIES = ['/webhooks', '/api/user', '/v1/engage', '/v1/operator', '/v1/accounts', '/v1/livechat'];
const tenantRoutes = () =>
  routes.filter((r) => r.url.startsWith('/v1/') && !OTHER_FAMILIES.some((p) => r.url === p || r.url.startsWith(`${p}/`)));

describe('API key scopes on every tenant route', () => {
  it('refuses a read key on every tenant route that is not GET or HEAD (403)', async () => {
    const writes = tenantRoutes().filter((r) => r.method !== 'GET' && r.method !== 'HEAD');
    expect(writes.map((r) => `${r.method} ${r.url}`)).toContain('POST /v1/api-keys'); // the collection works
    for (const route of writes) {
      const url = route.url.replace(/:[A-Za-z_]+/g, '1');
      const res = await ctx.app.inject({
        method: route.method as 'POST',
        url,
        headers: { ...reader.headers, 'content-type': 'application/json' },
        payload: '{}',
      });
      expect(res.statusCode, `${route.method} ${route.url}`).toBe(403);
      expect(res.json().error.code).toBe('forbidden');
    }
  });

  it('lets a read key GET tenant lists, and keeps admin routes from a write key', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers: reader.headers })).statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/connections', headers: writer.headers })).statusCode).toBe(200);
    for (const [method, url] of [
      ['GET', '/v1/api-keys'],
      ['POST', '/v1/api-keys'],
    ] as const) {
      const res = await ctx.app.inject({ method, url, headers: writer.headers, ...(method === 'POST' ? { payload: { name: 'x' } } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
    }
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/admin/webhook-inbox', headers: writer.headers })).statusCode).toBe(403);
  });

  it('gives a workspace user read and write, and admin only with the admin role', async () => {
    const { user, password } = await makeUser(ctx.deps, tenant.workspace.id);
    const jwt = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } })).json()
      .access_token as string;
    const headers = { authorization: `Bearer ${jwt}` };
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers })).statusCode).toBe(200);
    expect((await ctx.app.inject({ method: 'POST', url: '/v1/personal-access-tokens', headers, payload: { name: 'w' } })).statusCode).toBe(
      201,
    );
    expect((await ctx.app.inject({ method: 'GET', url: '/v1/api-keys', headers })).statusCode).toBe(403);
  });

  it('gives a key created without scopes read, and nothing more', async () => {
    for (const payload of [{ name: 'no scopes' }, { name: 'empty scopes', scopes: [] }]) {
      const created = await ctx.app.inject({ method: 'POST', url: '/v1/api-keys', headers: tenant.headers, payload });
      expect(created.statusCode).toBe(201);
      expect(created.json().data.scopes).toEqual(['read']);
      const headers = { 'x-api-key': created.json().data.key as string };
      expect((await ctx.app.inject({ method: 'GET', url: '/v1/threads', headers })).statusCode).toBe(200);
      expect((await ctx.app.inject({ method: 'DELETE', url: '/v1/api-keys/1', headers })).statusCode).toBe(403);
    }
  });
});

/** Routes open to anyone: their own credential is a signature, a token in the body or a link. */
const PUBLIC = [
  /^\/webhooks\//,
  /^\/api\/user\/(login|setup|generate-code|generate-token|invite\/accept|password-reset)/,
  /^\/csat\//,
  /^\/livechat\//,
  /^\/v1\/livechat\//,
  /^\/v1\/accounts\/webhook$/,
  /^\/(healthz|readyz|metrics|openapi\.json|mcp)$/,
  /^\/docs(\/|$)/,
  /^\/app/,
  /^\/auth\/sso\//,
  /^\/v1\/messages\/:id\/html$/,
];

describe('credentials before the request', () => {
  it('answers 401 to a caller without credentials on every guarded route, however wrong the request', async () => {
    const guarded = [...new Map(routes.map((r) => [`${r.method} ${r.url}`, r])).values()].filter(
      (r) => r.method !== 'HEAD' && !PUBLIC.some((p) => p.test(r.url)),
    );
    expect(guarded.map((r) => `${r.method} ${r.url}`)).toContain('POST /v1/engage/workspaces');
    for (const route of guarded) {
      // An id that is no id, a query and a body that no route accepts: the guard answers first.
      const url = `${route.url.replace(/:[A-Za-z_]+/g, 'not-an-id')}?limit=abc&status=bogus&undeclared=1`;
      const body = route.method === 'GET' || route.method === 'DELETE' ? {} : { payload: { undeclared: 1 } };
      const res = await ctx.app.inject({ method: route.method as 'POST', url, ...body });
      expect(res.statusCode, `${route.method} ${route.url}: ${res.body}`).toBe(401);
      expect(res.json().error.code).toBe('unauthorized');
    }
  });
});

describe('requireAuth picks the scope from the method', () => {
  it('a plain tenant guard lets read keys GET, and only write or admin keys do anything else', async () => {
    // A guard with no scope of its own, as every non-admin tenant route has, on a bare app.
    const app = Fastify();
    app.decorateRequest('auth', null);
    app.setErrorHandler((err: AppError, request, reply) => void reply.code(err.status).send(errorBody(request.id, err.code, err.message)));
    for (const method of ['GET', 'POST', 'PATCH', 'PUT', 'DELETE'] as const) {
      app.route({ method, url: '/thing', preValidation: requireAuth(ctx.deps), handler: async () => ({ ok: true }) });
    }
    await app.ready();
    const admin = tenant.headers;
    const cases = [
      [reader.headers, 'GET', 200],
      [reader.headers, 'HEAD', 200],
      [reader.headers, 'POST', 403],
      [reader.headers, 'PATCH', 403],
      [reader.headers, 'PUT', 403],
      [reader.headers, 'DELETE', 403],
      [writer.headers, 'GET', 200],
      [writer.headers, 'POST', 200],
      [writer.headers, 'DELETE', 200],
      [admin, 'GET', 200],
      [admin, 'PUT', 200],
    ] as const;
    for (const [headers, method, status] of cases) {
      const res = await app.inject({ method, url: '/thing', headers });
      expect(res.statusCode, `${method} with ${headers === reader.headers ? 'read' : headers === writer.headers ? 'write' : 'admin'}`).toBe(
        status,
      );
    }
    await app.close();
  });
});
