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
