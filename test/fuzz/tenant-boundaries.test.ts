import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import type { InjectOptions } from 'fastify';
import { describe, expect, it } from 'vitest';
import { adminHeaders, useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { multipartBody, PNG_1X1 } from '../helpers/multipart.js';
import { waitFor } from '../helpers/webhooks.js';
import { FUZZ_TIMEOUT_MS, runs } from './fuzz-scale.js';

/**
 * The lines between tenants, the operator and anonymous visitors under hostile input (seeded
 * fast-check, like hostile-input.test.ts; docs/security.md): made-up role lists never make an
 * operator, made-up connection bodies never make an operator's connection, made-up multipart
 * content types never answer 5xx, a signed link's query never reaches a log line however its
 * names are spelt, visitor files of any size stop at their limit, and whatever a stranger's
 * mail names in In-Reply-To, no message lands in a thread whose contact did not send it.
 */
const SEED = 20261126;
const EMAIL_SECRET = 'fuzz-email-secret-0123456789';
const VISITOR_MAX = 2048;
const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({
  workers: true,
  logLines,
  env: {
    INBOX_LIVECHAT_MAX_ATTACHMENT_BYTES: String(VISITOR_MAX),
    INBOX_INTEGRATIONS: JSON.stringify({ email: { webhookSecret: EMAIL_SECRET }, 'sms.twilio': { authToken: 'x'.repeat(32) } }),
  },
});
const tenant = await makeTenant(ctx.deps);
const ws = tenant.workspace.id;
const unique = () => randomBytes(4).toString('hex');

/** Answers within FUZZ_TIMEOUT_MS or fails as a hung request. */
async function answer(request: InjectOptions) {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`hung: ${JSON.stringify(request).slice(0, 300)}`)), FUZZ_TIMEOUT_MS);
  });
  try {
    return await Promise.race([ctx.app.inject(request), hung]);
  } finally {
    clearTimeout(timer);
  }
}

const ROLE = fc.constantFrom('admin', 'agent', 'operator', 'Operator', 'OPERATOR', ' operator', 'operator ', 'root', '', 'admin,operator');

describe('roles under hostile lists', () => {
  it('/v1/users never makes or changes an operator, whatever the list; never a 5xx', async () => {
    const agent = (
      await answer({
        method: 'POST',
        url: '/v1/users',
        headers: tenant.headers,
        payload: { name: 'Agent', email: `agent-${unique()}@fuzz.test`, password: 'long enough', roles: ['agent'] },
      })
    ).json().data as { id: number };
    const staff = await answer({
      method: 'POST',
      url: `/v1/engage/workspaces/${ws}/users`,
      headers: adminHeaders(),
      payload: { name: 'Staff', email: `staff-${unique()}@fuzz.test`, password: 'long enough', roles: ['operator'] },
    });
    const operatorId = staff.json().data.id as number;
    await fc.assert(
      fc.asyncProperty(
        fc.array(ROLE, { maxLength: 4 }),
        fc.constantFrom('create', 'patch agent', 'patch operator'),
        fc.option(fc.boolean(), { nil: undefined }),
        async (roles, what, active) => {
          const res =
            what === 'create'
              ? await answer({
                  method: 'POST',
                  url: '/v1/users',
                  headers: tenant.headers,
                  payload: { name: 'Fuzz', email: `fuzz-${unique()}@fuzz.test`, password: 'long enough', roles },
                })
              : await answer({
                  method: 'PATCH',
                  url: `/v1/users/${what === 'patch agent' ? agent.id : operatorId}`,
                  headers: tenant.headers,
                  payload: { roles, ...(active === undefined ? {} : { active }) },
                });
          expect(res.statusCode, res.body).toBeLessThan(500);
          if (roles.includes('operator') || what === 'patch operator') expect(res.statusCode, res.body).toBe(422);
        },
      ),
      { seed: SEED, numRuns: runs(150) },
    );
    const operators = await ctx.deps.db
      .selectFrom('users')
      .select(['id', 'roles', 'active'])
      .where('workspace_id', '=', ws)
      .where((eb) => eb(eb.val('operator'), '=', eb.fn.any('roles')))
      .execute();
    expect(operators).toEqual([{ id: operatorId, roles: ['operator'], active: true }]);
  });

  it("POST /v1/connections never makes an operator's connection, whatever else the body says", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.constantFrom('managedBy', 'managed_by', 'workspaceId', 'credentials', 'hasCredentials', 'name'),
          fc.oneof(fc.constantFrom('operator', 'workspace', null, true, 1), fc.json({ maxDepth: 2 })),
          { maxKeys: 3 },
        ),
        async (extra) => {
          const res = await answer({
            method: 'POST',
            url: '/v1/connections',
            headers: tenant.headers,
            payload: { integrationKey: 'sms.twilio', externalAccountId: `+1415${unique()}`, name: 'Fuzz', ...extra },
          });
          expect(res.statusCode, res.body).toBeLessThan(500);
          if (res.statusCode === 201) expect(res.json().data.managedBy).toBe('workspace');
        },
      ),
      { seed: SEED, numRuns: runs(100) },
    );
    const made = await ctx.deps.db
      .selectFrom('connections')
      .select('managed_by')
      .where('workspace_id', '=', ws)
      .where('integration_key', '=', 'sms.twilio')
      .distinct()
      .execute();
    expect(made.map((c) => c.managed_by).filter((m) => m === 'operator')).toEqual([]);
  });
});

describe('multipart content types of every hostile shape', () => {
  it('never answer 5xx on any multipart route, and a body without a boundary is 400', async () => {
    const widget = await makeWidget(ctx.deps, ws);
    const visitor = await startVisitor(ctx.app, widget.key);
    const routes: [string, Record<string, string>][] = [
      ['/v1/attachments', tenant.headers],
      [`/v1/livechat/${widget.key}/attachments`, visitor.headers],
      ['/webhooks/email.mailgun', {}],
      ['/webhooks/sms.twilio', {}],
      ['/webhooks/email', {}],
    ];
    const body = multipartBody({ filename: 'a.png', bytes: PNG_1X1 });
    const realBoundary = body.headers['content-type'].split('boundary=')[1]!;
    const param = fc.oneof(
      fc.constantFrom(
        '',
        ';',
        '; boundary=',
        '; boundary=""',
        '; boundary="unterminated',
        `; boundary=${'b'.repeat(71)}`,
        '; charset=utf-8',
        '; BOUNDARY',
        `; boundary=${realBoundary}`,
        `; boundary="${realBoundary}"`,
        `; boundary=${realBoundary}; boundary=other`,
        '; boundary=\u0000',
      ),
      fc.string({ maxLength: 40 }).map((s) => `; ${s}`),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes),
        fc.constantFrom('multipart/form-data', 'Multipart/Form-Data', 'multipart/mixed', 'multipart/', ' multipart/form-data'),
        param,
        fc.oneof(
          fc.constant(body.payload),
          fc.uint8Array({ maxLength: 200 }).map((b) => Buffer.from(b)),
        ),
        async ([url, headers], type, tail, payload) => {
          const contentType = `${type}${tail}`;
          const res = await answer({ method: 'POST', url, headers: { ...headers, 'content-type': contentType }, payload });
          expect(res.statusCode, `${url} ${JSON.stringify(contentType)} → ${res.body}`).toBeLessThan(500);
          if (res.statusCode >= 400) expect(res.json().error.code).toEqual(expect.any(String));
          if (!/boundary\s*=\s*("[^"]+"|[^\s;"]+)/i.test(tail)) expect(res.statusCode, `${url} ${JSON.stringify(contentType)}`).toBe(400);
        },
      ),
      { seed: SEED, numRuns: runs(300) },
    );
  });
});

describe('signed links in request logs', () => {
  const NAMES = {
    signature: ['signature', 'SIGNATURE', 'Signature', '%73ignature', 'sig%6Eature', 'sig%6eature'],
    expires: ['expires', 'EXPIRES', 'Expires', '%65xpires', 'expire%73'],
  };
  it("never carry a signature's or an expiry's value, however the names are spelt or ordered", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...NAMES.signature),
        fc.constantFrom(...NAMES.expires),
        fc.uint8Array({ minLength: 32, maxLength: 32 }).map((b) => Buffer.from(b).toString('hex')),
        fc.integer({ min: 1_000_000_000, max: 9_999_999_999 }),
        fc.array(fc.constantFrom('x=1', 'download=1', '', 'signature', '&&', 'token=t'), { maxLength: 3 }),
        fc.boolean(),
        async (sigName, expName, signature, expires, others, swap) => {
          const sigValue = `sig${signature}`;
          const expValue = `e${expires}`;
          const pairs = [`${sigName}=${sigValue}`, `${expName}=${expValue}`];
          if (swap) pairs.reverse();
          const url = `/v1/attachments/${expires % 1000}/content?${[...others, ...pairs].join('&')}`;
          const before = logLines.length;
          await answer({ method: 'GET', url });
          const written = logLines
            .slice(before)
            .map((l) => JSON.stringify(l))
            .join('\n');
          expect(written, url).toContain('request completed');
          expect(written, url).not.toContain(sigValue);
          expect(written, url).not.toContain(expValue);
        },
      ),
      { seed: SEED, numRuns: runs(200) },
    );
  });
});

describe('visitor files of any size', () => {
  it(`are stored up to ${VISITOR_MAX} bytes and refused (413, nothing kept) above, never a 5xx`, async () => {
    const widget = await makeWidget(ctx.deps, ws);
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(fc.integer({ min: 0, max: 3 * VISITOR_MAX }), fc.constantFrom(VISITOR_MAX - 1, VISITOR_MAX, VISITOR_MAX + 1)),
        async (size) => {
          const visitor = await startVisitor(ctx.app, widget.key);
          const file = multipartBody({ filename: 'f.bin', bytes: Buffer.alloc(size, 1) });
          const res = await answer({
            method: 'POST',
            url: `/v1/livechat/${widget.key}/attachments`,
            headers: { ...visitor.headers, ...file.headers },
            payload: file.payload,
          });
          expect(res.statusCode, `${size} → ${res.body}`).toBe(size <= VISITOR_MAX ? 201 : 413);
        },
      ),
      { seed: SEED, numRuns: runs(40) },
    );
    const sizes = await ctx.deps.db
      .selectFrom('attachments')
      .select('size')
      .where('uploaded_by_visitor', 'is not', null)
      .where('size', '>', VISITOR_MAX)
      .execute();
    expect(sizes).toEqual([]);
  });
});

describe('e-mail threads under made-up references', () => {
  it('never put a message in a thread whose contact did not send it, whatever it names', async () => {
    const account = `support-${unique()}@fuzz.test`;
    await makeConnection(ctx.deps, ws, { integrationKey: 'email', externalAccountId: account });
    const customers = ['dana@example.org', 'lee@example.org'];
    const strangers = ['mallory@example.net', 'DANA@example.org.evil', 'lee@example.org '];
    const post = (mail: Record<string, unknown>) =>
      answer({
        method: 'POST',
        url: '/webhooks/email',
        headers: { 'content-type': 'application/json', 'x-vendor-auth': EMAIL_SECRET },
        payload: { type: 'inbound', to: account, subject: 'Order', text: 'hello', ...mail },
      });
    const known: string[] = [];
    const sender = new Map<string, string>();
    for (const from of customers) {
      const id = `<${unique()}@${from.split('@')[1]}>`;
      expect((await post({ messageId: id, from: { email: from } })).statusCode).toBe(200);
      known.push(id);
      sender.set(id, from);
    }
    const mails = fc.sample(
      fc.record({
        from: fc.constantFrom(...customers, ...strangers, 'Dana@Example.org'),
        inReplyTo: fc.option(fc.constantFrom(...known, '<unknown@x>'), { nil: undefined }),
        references: fc.array(fc.constantFrom(...known, '<unknown@y>', 'garbage'), { maxLength: 3 }),
      }),
      { seed: SEED, numRuns: runs(40) },
    );
    for (const m of mails) {
      const id = `<${unique()}@fuzz.test>`;
      sender.set(id, m.from);
      const res = await post({ messageId: id, from: { email: m.from }, inReplyTo: m.inReplyTo, references: m.references });
      expect(res.statusCode, res.body).toBe(200);
    }
    const stored = await waitFor(async () => {
      const rows = await ctx.deps.db
        .selectFrom('messages as m')
        .innerJoin('threads as t', 't.id', 'm.thread_id')
        .select(['m.external_id', 't.contact_id'])
        .where('m.external_id', 'in', [...sender.keys()])
        .execute();
      return rows.length === sender.size && rows;
    }, 'every mail processed');
    for (const row of stored) {
      const handles = await ctx.deps.db
        .selectFrom('contact_handles')
        .select('external_id')
        .where('contact_id', '=', row.contact_id)
        .execute();
      expect(
        handles.map((h) => h.external_id),
        row.external_id!,
      ).toContain(sender.get(row.external_id!)!.trim().toLowerCase());
    }
  });
});
