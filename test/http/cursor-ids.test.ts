import { describe, expect, it } from 'vitest';
import { encodeCursor } from '../../src/http/pagination.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();
const tenant = await makeTenant(ctx.deps);
const { user, password } = await makeUser(ctx.deps, tenant.workspace.id, { roles: ['admin'] });
const token = (await ctx.app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } })).json()
  .access_token as string;

describe('a well-formed cursor naming an id no row of the list can have (docs/api.md, "Pagination")', () => {
  // Lists of tables whose ids are `integer` (users, teams, macros) and `bigint` (threads) alike.
  it.each(['/v1/users', '/v1/teams', '/v1/macros', '/v1/threads'])('%s pages after it, never a 500', async (url) => {
    for (const id of [2 ** 31, 999_999_999_999_999]) {
      const cursor = encodeCursor(new Date(), id);
      const res = await ctx.app.inject({ method: 'GET', url: `${url}?cursor=${cursor}`, headers: { authorization: `Bearer ${token}` } });
      expect(res.statusCode, `${id}: ${res.body}`).toBe(200);
      expect(Array.isArray(res.json().data)).toBe(true);
    }
  });
});
