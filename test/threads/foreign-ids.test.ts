import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant, makeUser } from '../helpers/factories.js';

const ctx = await useTestContext();

describe('another workspace’s contact, user or canned response', () => {
  it('is not_found on every route of the team, contacts and canned responses, and nothing changes', async () => {
    const mine = await makeTenant(ctx.deps);
    const theirs = await makeTenant(ctx.deps);
    const db = ctx.deps.db;
    const myContact = await db
      .insertInto('contacts')
      .values({ workspace_id: mine.workspace.id, name: 'Mine' })
      .returningAll()
      .executeTakeFirstOrThrow();
    const contact = await db
      .insertInto('contacts')
      .values({ workspace_id: theirs.workspace.id, name: 'Theirs' })
      .returningAll()
      .executeTakeFirstOrThrow();
    const { user } = await makeUser(ctx.deps, theirs.workspace.id, { roles: ['agent'] });
    const canned = (
      await ctx.app.inject({
        method: 'POST',
        url: '/v1/canned-responses',
        headers: theirs.headers,
        payload: { shortCode: 'hi', content: 'Hi' },
      })
    ).json().data;

    const walk: [string, string, object?][] = [
      ['GET', `/v1/contacts/${contact.id}`],
      ['PATCH', `/v1/contacts/${contact.id}`, { name: 'Stolen' }],
      ['POST', `/v1/contacts/${contact.id}/merge`, { contactId: myContact.id }],
      ['POST', `/v1/contacts/${myContact.id}/merge`, { contactId: contact.id }],
      ['PATCH', `/v1/users/${user.id}`, { name: 'Stolen', active: false }],
      ['PATCH', `/v1/canned-responses/${canned.id}`, { content: 'Stolen' }],
      ['DELETE', `/v1/canned-responses/${canned.id}`],
    ];
    for (const [method, url, payload] of walk) {
      const res = await ctx.app.inject({ method: method as 'GET', url, headers: mine.headers, ...(payload ? { payload } : {}) });
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code, `${method} ${url}`).toBe('not_found');
    }
    // the lists never show them either
    for (const url of ['/v1/contacts', '/v1/users', '/v1/canned-responses', `/v1/contacts?q=Theirs`]) {
      const ids = (await ctx.app.inject({ method: 'GET', url, headers: mine.headers })).json().data.map((x: { id: number }) => x.id);
      expect(ids, url).not.toContain(url.includes('users') ? user.id : url.includes('canned') ? canned.id : contact.id);
    }
    expect(
      await db.selectFrom('contacts').select(['id', 'name']).where('id', 'in', [contact.id, myContact.id]).orderBy('id').execute(),
    ).toEqual([
      { id: myContact.id, name: 'Mine' },
      { id: contact.id, name: 'Theirs' },
    ]);
    expect(await db.selectFrom('users').select(['name', 'active']).where('id', '=', user.id).executeTakeFirst()).toEqual({
      name: 'Test User',
      active: true,
    });
    expect(await db.selectFrom('canned_responses').select('content').where('id', '=', canned.id).executeTakeFirst()).toEqual({
      content: 'Hi',
    });
  });
});
