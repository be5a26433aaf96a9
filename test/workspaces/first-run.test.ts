import { describe, expect, it } from 'vitest';
import { announceSetupLink } from '../../src/workspaces/first-run.js';
import { startTestContext, useTestContext } from '../helpers/app.js';

const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({ env: { INBOX_PUBLIC_URL: 'https://inbox.acme.test' }, logLines });
const SETUP_LINK = /^https:\/\/inbox\.acme\.test\/app\/setup#token=([\w-]+)$/;
const workspaces = async () => ctx.deps.db.selectFrom('workspaces').selectAll().execute();
const setup = (payload: object) => ctx.app.inject({ method: 'POST', url: '/api/user/setup', payload });
const body = (token: string) => ({
  token,
  workspaceName: 'Acme Support',
  name: 'Ada Founder',
  email: 'ada@acme.test',
  password: 'the first password',
});

describe('first run', () => {
  it('logs a setup link while no workspace exists; the link creates the workspace and its admin, once', async () => {
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/setup' })).json().data).toEqual({ open: true });
    const link = await announceSetupLink(ctx.deps);
    const other = await announceSetupLink(ctx.deps);
    const token = SETUP_LINK.exec(link ?? '')![1]!;
    const logged = logLines.filter((l) => String(l.msg).includes('/app/setup#token='));
    expect(logged.map((l) => l.msg)).toEqual([
      `no workspace exists yet: open ${link} to create the first workspace and its admin (the link works once)`,
      `no workspace exists yet: open ${other} to create the first workspace and its admin (the link works once)`,
    ]);

    // Refusals write nothing and leave the link good.
    const wrong = await setup(body('not-the-token'));
    expect(wrong.statusCode).toBe(401);
    const short = await setup({ ...body(token), password: 'too short' });
    expect(short.statusCode).toBe(422);
    const same = await setup({ ...body(token), password: 'ADA@acme.test' });
    expect(same.json().error).toEqual({ code: 'validation_failed', message: 'password: must not be your e-mail address' });
    const extra = await setup({ ...body(token), roles: ['operator'] });
    expect(extra.statusCode).toBe(422);
    expect(await workspaces()).toEqual([]);

    const done = await setup(body(token));
    expect(done.statusCode, done.body).toBe(201);
    const { workspace, user } = done.json().data;
    expect(workspace).toMatchObject({ name: 'Acme Support', appId: expect.stringMatching(/^app_/) });
    expect(user).toMatchObject({ name: 'Ada Founder', email: 'ada@acme.test', roles: ['admin'], workspaces_id: workspace.id });
    const login = await ctx.app.inject({
      method: 'POST',
      url: '/api/user/login',
      payload: { email: 'ada@acme.test', password: 'the first password' },
    });
    expect(login.statusCode).toBe(200);
    // The audit log starts with the setup: the workspace and its admin, made by that person.
    const audit = await ctx.app.inject({
      method: 'GET',
      url: '/v1/audit-log',
      headers: { authorization: `Bearer ${login.json().access_token}` },
    });
    const entries = (audit.json().data as { action: string; actor: object; target: object; changes: unknown }[]).reverse();
    const founder = { type: 'user', id: user.id, name: 'Ada Founder' };
    expect(entries.slice(0, 3)).toEqual([
      expect.objectContaining({
        action: 'workspace.created',
        actor: founder,
        target: { type: 'workspace', id: workspace.id },
        changes: { name: { old: null, new: 'Acme Support' } },
      }),
      expect.objectContaining({
        action: 'user.created',
        actor: founder,
        target: { type: 'user', id: user.id },
        changes: {
          name: { old: null, new: 'Ada Founder' },
          email: { old: null, new: 'ada@acme.test' },
          roles: { old: null, new: ['admin'] },
          password: { old: null, new: '[set]' },
        },
      }),
      expect.objectContaining({ action: 'sign_in.succeeded' }),
    ]);
    expect(audit.body).not.toContain('the first password');

    // Never again: not with the same link, not with the other one, and no new link is logged.
    for (const t of [token, SETUP_LINK.exec(other ?? '')![1]!]) {
      const again = await setup({ ...body(t), email: 'mallory@acme.test' });
      expect(again.statusCode).toBe(409);
      expect(again.json().error.code).toBe('conflict');
    }
    expect(await announceSetupLink(ctx.deps)).toBeUndefined();
    expect(logLines.filter((l) => String(l.msg).includes('/app/setup#token='))).toHaveLength(2);
    expect((await ctx.app.inject({ method: 'GET', url: '/api/user/setup' })).json().data).toEqual({ open: false });
    expect(await workspaces()).toHaveLength(1);
  });

  it('two links used at the same moment make one workspace; the other gets 409', async () => {
    const fresh = await startTestContext();
    try {
      const links = [(await announceSetupLink(fresh.deps))!, (await announceSetupLink(fresh.deps))!];
      const answers = await Promise.all(
        links.map((link, i) =>
          fresh.app.inject({
            method: 'POST',
            url: '/api/user/setup',
            payload: { ...body(link.split('#token=')[1]!), email: `founder-${i}@acme.test` },
          }),
        ),
      );
      expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 409]);
      expect(await fresh.deps.db.selectFrom('workspaces').selectAll().execute()).toHaveLength(1);
      expect(await fresh.deps.db.selectFrom('users').selectAll().execute()).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });
});
