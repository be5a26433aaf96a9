import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { week } from '../helpers/inbound.js';
import { signedInUser } from '../threads/workflow-helpers.js';

const ctx = await useTestContext();

type Method = 'GET' | 'POST' | 'PATCH';
const call = (method: Method, url: string, headers: Record<string, string>, payload?: object) =>
  ctx.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });

const HOURS = {
  timezone: 'Europe/Berlin',
  weekly: week([
    ['13:00', '17:00'],
    ['09:00', '12:00'],
  ]),
  holidays: ['2026-12-25', '2026-12-24'],
};
const STORED = {
  ...HOURS,
  weekly: week([
    ['09:00', '12:00'],
    ['13:00', '17:00'],
  ]),
  holidays: ['2026-12-24', '2026-12-25'],
};

const BAD: [object, string][] = [
  [{ ...HOURS, timezone: 'Berlin/Europe' }, 'businessHours.timezone'],
  [{ ...HOURS, weekly: { ...HOURS.weekly, mon: [['9', '17:00']] } }, 'businessHours.weekly.mon[0]'],
  [
    {
      ...HOURS,
      weekly: {
        ...HOURS.weekly,
        tue: [
          ['09:00', '12:00'],
          ['11:00', '13:00'],
        ],
      },
    },
    'businessHours.weekly.tue',
  ],
  [{ ...HOURS, weekly: { ...HOURS.weekly, wed: [['18:00', '17:00']] } }, 'businessHours.weekly.wed[0]'],
  [{ ...HOURS, holidays: ['25.12.2026'] }, 'businessHours.holidays[0]'],
  [{ ...HOURS, weekly: week([]) }, 'businessHours.weekly'],
  [{ ...HOURS, colour: 'red' }, 'businessHours'],
];

describe('business hours settings', () => {
  it('stores the workspace hours sorted, and null turns them off', async () => {
    const tenant = await makeTenant(ctx.deps);
    const res = await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: HOURS });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.businessHours).toEqual(STORED);
    expect((await call('GET', '/v1/workspace', tenant.headers)).json().data.businessHours).toEqual(STORED);
    const off = await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: null });
    expect(off.json().data.businessHours).toBeNull();
  });

  it('refuses bad hours on the workspace and on a team with 422 naming the field, changing nothing', async () => {
    const tenant = await makeTenant(ctx.deps);
    const admin = await signedInUser(ctx.app, ctx, tenant.workspace.id, { roles: ['admin'] });
    const team = (await call('POST', '/v1/teams', admin.headers, { name: 'Night shift' })).json().data;
    for (const [businessHours, field] of BAD) {
      for (const [method, url] of [
        ['PATCH', '/v1/workspace'],
        ['PATCH', `/v1/teams/${team.id}`],
        ['POST', '/v1/teams'],
      ] as const) {
        const res = await call(method, url, admin.headers, { name: `T ${Math.random()}`, businessHours });
        expect(res.statusCode, `${url} ${JSON.stringify(businessHours)}`).toBe(422);
        expect(res.json().error.code).toBe('validation_failed');
        expect(res.json().error.message).toContain(field);
      }
    }
    expect((await call('GET', '/v1/workspace', admin.headers)).json().data).toMatchObject({ businessHours: null });
    expect((await call('GET', `/v1/teams/${team.id}`, admin.headers)).json().data).toMatchObject({
      name: 'Night shift',
      businessHours: null,
    });
  });

  it('takes hours without holidays on the workspace and a team, storing none', async () => {
    const tenant = await makeTenant(ctx.deps);
    const { holidays: _left, ...withoutHolidays } = HOURS;
    const none = { ...STORED, holidays: [] };
    const workspace = await call('PATCH', '/v1/workspace', tenant.headers, { businessHours: withoutHolidays });
    expect(workspace.statusCode, workspace.body).toBe(200);
    expect(workspace.json().data.businessHours).toEqual(none);
    const team = await call('POST', '/v1/teams', tenant.headers, { name: 'Weekdays', businessHours: withoutHolidays });
    expect(team.statusCode, team.body).toBe(201);
    expect(team.json().data.businessHours).toEqual(none);
    const patched = await call('PATCH', `/v1/teams/${team.json().data.id}`, tenant.headers, { businessHours: withoutHolidays });
    expect(patched.json().data.businessHours).toEqual(none);
  });

  it('gives a team its own hours', async () => {
    const tenant = await makeTenant(ctx.deps);
    const created = await call('POST', '/v1/teams', tenant.headers, { name: 'Support', businessHours: HOURS });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data.businessHours).toEqual(STORED);
    const cleared = await call('PATCH', `/v1/teams/${created.json().data.id}`, tenant.headers, { businessHours: null });
    expect(cleared.json().data.businessHours).toBeNull();
  });
});
