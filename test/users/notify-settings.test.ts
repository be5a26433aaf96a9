import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { signedInUser } from '../helpers/threads.js';

/** `PATCH /v1/users/me {notify: {email: …}}` (docs/teams.md, "Notification e-mail"): one's own, merged, private. */
const ctx = await useTestContext();
type Headers = Record<string, string>;
const patchMe = (headers: Headers, payload: object) => ctx.app.inject({ method: 'PATCH', url: '/v1/users/me', headers, payload });
const listed = async (headers: Headers) =>
  (await ctx.app.inject({ method: 'GET', url: '/v1/users?limit=100', headers })).json().data as { id: number; notify?: object }[];

describe('notify.email', () => {
  it('defaults to everything, merges a partial patch, and shows only on the caller’s own user', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ada = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
    const bo = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);

    const own = (await listed(ada.headers)).find((u) => u.id === ada.user.id)!;
    expect(own.notify).toEqual({ email: { assigned: true, mentioned: true, sla: true } });
    expect((await listed(ada.headers)).find((u) => u.id === bo.user.id)!.notify).toBeUndefined();
    expect((await listed(tenant.headers)).every((u) => u.notify === undefined)).toBe(true);

    const first = await patchMe(ada.headers, { notify: { email: { mentioned: false } } });
    expect(first.statusCode, first.body).toBe(200);
    expect(first.json().data.notify).toEqual({ email: { assigned: true, mentioned: false, sla: true } });
    const second = await patchMe(ada.headers, { notify: { email: { sla: false } }, name: 'Ada' });
    expect(second.json().data).toMatchObject({ name: 'Ada', notify: { email: { assigned: true, mentioned: false, sla: false } } });
    // A patch without notify, or with an empty one, leaves the settings as they were.
    expect((await patchMe(ada.headers, { availability: 'busy' })).json().data.notify.email).toEqual({
      assigned: true,
      mentioned: false,
      sla: false,
    });
    expect((await patchMe(ada.headers, { notify: {} })).json().data.notify.email.assigned).toBe(true);
    // Bo's own are his, untouched by Ada's.
    expect((await listed(bo.headers)).find((u) => u.id === bo.user.id)!.notify).toEqual({
      email: { assigned: true, mentioned: true, sla: true },
    });
    const row = await ctx.deps.db.selectFrom('users').selectAll().where('id', '=', ada.user.id).executeTakeFirstOrThrow();
    expect([row.notify_email_assigned, row.notify_email_mentioned, row.notify_email_sla]).toEqual([true, false, false]);
  });

  it('refuses a bad type or an unknown field with 422 naming it, and writes nothing', async () => {
    const tenant = await makeTenant(ctx.deps);
    const ada = await signedInUser(ctx.app, ctx.deps, tenant.workspace.id);
    for (const [body, field] of [
      [{ notify: { email: { assigned: 'no' } } }, 'assigned'],
      [{ notify: { email: { sla: null } } }, 'sla'],
      [{ notify: { email: { message: false } } }, 'message'],
      [{ notify: { email: false } }, 'email'],
      [{ notify: { browser: {} } }, 'browser'],
      [{ notify: 'off', name: 'Renamed' }, 'notify'],
    ] as const) {
      const res = await patchMe(ada.headers, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(422);
      expect(res.json().error.code).toBe('validation_failed');
      expect(res.json().error.message, JSON.stringify(body)).toContain(field);
    }
    const row = await ctx.deps.db.selectFrom('users').selectAll().where('id', '=', ada.user.id).executeTakeFirstOrThrow();
    expect([row.name, row.notify_email_assigned, row.notify_email_mentioned, row.notify_email_sla]).toEqual([
      ada.user.name,
      true,
      true,
      true,
    ]);
  });
});
