import { describe, expect, it } from 'vitest';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant, makeUser } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';

/**
 * Unknown body fields are refused everywhere: a field a route does not declare is a 422
 * `validation_failed` naming it, never silently dropped. The routes are read from the OpenAPI
 * document, so a route added later without a closed body schema fails here.
 */
const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const admin = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
const login = await ctx.app.inject({
  method: 'POST',
  url: '/api/user/login',
  payload: { email: admin.user.email, password: admin.password, remember: false },
});
const jwt = login.json().access_token as string;
const widget = await makeWidget(ctx.deps, tenant.workspace.id);
const visitor = await startVisitor(ctx.app, widget.key);
const whatsapp = await makeConnection(ctx.deps, tenant.workspace.id);

const EXTRA = 'unknownField';

interface Schema {
  $ref?: string;
  required?: string[];
  properties?: Record<string, Schema>;
}
interface Operation {
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
}

const doc = (await ctx.app.inject({ method: 'GET', url: '/openapi.json' })).json() as Doc;
const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components!.schemas![s.$ref.split('/').pop()!]!) : s);

/** Provider webhooks and the accounts webhook read raw bytes verified by signature: never schema-validated. */
const RAW_BODY_ROUTES = (path: string) => path.startsWith('/webhooks') || path === '/v1/accounts/webhook';

const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
  Object.entries(ops)
    .filter(([method]) => ['post', 'put', 'patch', 'delete'].includes(method))
    .filter(() => !RAW_BODY_ROUTES(path))
    .map(([method, op]) => ({ method: method.toUpperCase() as 'POST' | 'PUT' | 'PATCH' | 'DELETE', path, op })),
);

function url(path: string): string {
  return path.replace(/\{(\w+)\}/g, (_m, name: string) =>
    name === 'widgetKey' ? widget.key : name === 'id' && path.startsWith('/v1/connections') ? String(whatsapp.id) : '1',
  );
}

/** The credential each family takes; validation must be reached, not stopped at a 401/403. */
function headers(path: string): Record<string, string> {
  if (path.startsWith('/v1/livechat')) return visitor.headers;
  if (path.startsWith('/v1/engage/') || path.startsWith('/v1/operator/')) return adminHeaders();
  return { authorization: `Bearer ${jwt}` };
}

/** Every required property present (its value need not be valid: unknown fields are checked first), plus the extra one. */
function bodyFor(op: Operation): Record<string, unknown> {
  const schema = op.requestBody?.content?.['application/json']?.schema;
  const body: Record<string, unknown> = {};
  if (schema) for (const name of resolve(schema).required ?? []) body[name] = null;
  body[EXTRA] = true;
  return body;
}

describe('unknown body fields', () => {
  it('are refused with 422 naming the field on every route of the OpenAPI document that takes a body', async () => {
    const withBody = operations.filter(({ op }) => op.requestBody?.content?.['application/json']);
    expect(withBody.length).toBeGreaterThanOrEqual(12);
    const wrong: string[] = [];
    for (const { method, path, op } of withBody) {
      const res = await ctx.app.inject({ method, url: url(path), headers: headers(path), payload: bodyFor(op) });
      const error = res.json().error as { code?: string; message?: string } | undefined;
      if (res.statusCode !== 422 || error?.code !== 'validation_failed' || !error.message?.includes(`"${EXTRA}"`)) {
        wrong.push(`${method} ${path} → ${res.statusCode} ${res.body}`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('are refused on routes that take no body at all; an empty object or no body still passes validation', async () => {
    const bodiless = operations.filter(({ op }) => !op.requestBody);
    expect(bodiless.length).toBeGreaterThanOrEqual(10);
    const wrong: string[] = [];
    for (const { method, path } of bodiless) {
      const res = await ctx.app.inject({ method, url: url(path), headers: headers(path), payload: { [EXTRA]: 1 } });
      const error = res.json().error as { code?: string; message?: string } | undefined;
      if (res.statusCode !== 422 || error?.code !== 'validation_failed' || !error.message?.includes(`"${EXTRA}"`)) {
        wrong.push(`${method} ${path} → ${res.statusCode} ${res.body}`);
      }
    }
    expect(wrong).toEqual([]);
    // `{}` is not an unknown field: a client that always sends a JSON object keeps working.
    const rotated = await ctx.app.inject({ method: 'POST', url: '/v1/api-keys', headers: tenant.headers, payload: { name: 'k' } });
    const id = rotated.json().data.id as number;
    expect(
      (await ctx.app.inject({ method: 'POST', url: `/v1/api-keys/${id}/rotate`, headers: tenant.headers, payload: {} })).statusCode,
    ).toBe(200);
    expect((await ctx.app.inject({ method: 'POST', url: `/v1/api-keys/${id}/rotate`, headers: tenant.headers })).statusCode).toBe(200);
  });

  it('names a nested unknown field by its path', async () => {
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/connections/${whatsapp.id}`,
      headers: tenant.headers,
      payload: { credentials: { accessToken: 'EAAG-token', acessToken: 'typo' } },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toMatchObject({ code: 'validation_failed' });
    expect(res.json().error.message).toContain('acessToken');
  });

  it('a reply with an undeclared flag is refused and nothing is written or sent', async () => {
    const thread = await ctx.deps.db
      .insertInto('contacts')
      .values({ workspace_id: tenant.workspace.id, name: 'Customer' })
      .returning('id')
      .executeTakeFirstOrThrow()
      .then((c) =>
        ctx.deps.db
          .insertInto('threads')
          .values({ workspace_id: tenant.workspace.id, connection_id: whatsapp.id, contact_id: c.id, last_message_preview: 'hi' })
          .returning('id')
          .executeTakeFirstOrThrow(),
      );
    const before = await ctx.deps.db
      .selectFrom('messages')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    const res = await ctx.app.inject({
      method: 'POST',
      url: `/v1/threads/${thread.id}/messages`,
      headers: tenant.headers,
      payload: { text: 'internal: VIP', internal: true },
    });
    expect(res.statusCode).toBe(422);
    expect(res.json().error).toEqual({ code: 'validation_failed', message: 'body must not have property "internal"' });
    const after = await ctx.deps.db
      .selectFrom('messages')
      .select(({ fn }) => fn.countAll<string>().as('n'))
      .executeTakeFirstOrThrow();
    expect(after.n).toBe(before.n);
  });
});
