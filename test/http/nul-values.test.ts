import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';

// PostgreSQL text cannot hold U+0000: a value carrying one reaches the database only to be
// refused there. The answer is the client's error (400), never a 500.
const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);

describe('a NUL character in a value', () => {
  it.each(['/v1/contacts?q=%00', '/v1/contacts?q=a%00b', '/v1/messages/search?q=%00', '/v1/threads?label=%00'])(
    'GET %s answers 400 naming it',
    async (url) => {
      const res = await ctx.app.inject({ method: 'GET', url, headers: tenant.headers });
      expect(res.statusCode, res.body).toBeLessThan(500);
      if (res.statusCode === 400) expect(res.json().error.message).toContain('NUL');
    },
  );

  it('the contacts search the fuzzer found answers 400, not 500', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/v1/contacts?q=%00&cursor=MDow', headers: tenant.headers });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error).toMatchObject({ code: 'bad_request' });
  });
});

// JSON writes a lone (unpaired) UTF-16 surrogate as `\udXXX` and a NUL as `\u0000`, both of
// which Postgres refuses in a jsonb value (the audit log's changes, settings, rule actions,
// contact attributes). A lone surrogate is kept as U+FFFD, as a text column keeps it; a NUL
// answers the same 400 as anywhere else. Never a 500, never half a write.
describe('a lone surrogate or a NUL in a value bound for a jsonb column', () => {
  it('a team named with a lone surrogate is created (audited), the surrogate kept as U+FFFD', async () => {
    const res = await ctx.app.inject({ method: 'POST', url: '/v1/teams', headers: tenant.headers, payload: { name: 'Sup\ud800port' } });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.name).toBe('Sup\ufffdport');
    const renamed = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/teams/${res.json().data.id}`,
      headers: tenant.headers,
      payload: { description: '\udc00 first line' },
    });
    expect(renamed.statusCode, renamed.body).toBe(200);
  });

  it('a workspace renamed and a macro written with one answer 200 and 201', async () => {
    const ws = await ctx.app.inject({ method: 'PATCH', url: '/v1/workspace', headers: tenant.headers, payload: { name: 'Shop \ud83d' } });
    expect(ws.statusCode, ws.body).toBe(200);
    const macro = await ctx.app.inject({
      method: 'POST',
      url: '/v1/macros',
      headers: tenant.headers,
      payload: { name: 'Greet', actions: [{ type: 'note', text: 'hi \ud800 there' }] },
    });
    expect(macro.statusCode, macro.body).toBe(201);
    expect(macro.json().data.actions).toEqual([{ type: 'note', text: 'hi \ufffd there' }]);
  });

  it("a contact's attributes keep a lone surrogate of a key or a value as U+FFFD", async () => {
    const contact = await ctx.deps.db
      .insertInto('contacts')
      .values({ workspace_id: tenant.workspace.id, name: 'Ada' })
      .returning('id')
      .executeTakeFirstOrThrow();
    const res = await ctx.app.inject({
      method: 'PATCH',
      url: `/v1/contacts/${contact.id}`,
      headers: tenant.headers,
      payload: { attributes: { 'plan\udc00': 'gold\ud800' } },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.attributes).toEqual({ 'plan\ufffd': 'gold\ufffd' });
  });

  it('a NUL in an endpoint description answers 400 and writes no endpoint', async () => {
    const res = await ctx.app.inject({
      method: 'POST',
      url: '/v1/webhook-endpoints',
      headers: tenant.headers,
      payload: { url: 'https://example.test/hook', description: 'a\u0000b' },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().error.code).toBe('bad_request');
    const rows = await ctx.deps.db.selectFrom('webhook_endpoints').select('id').where('workspace_id', '=', tenant.workspace.id).execute();
    expect(rows).toEqual([]);
  });
});
