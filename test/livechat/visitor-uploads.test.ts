import { describe, expect, it } from 'vitest';
import { startTestContext, useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget, startVisitor } from '../helpers/livechat.js';
import { multipartBody } from '../helpers/multipart.js';

// Small figures, so the limits are reached with small files; the service's defaults are 10 MB
// a file and 500 MB a widget an hour (docs/security.md).
const FILE_MAX = 4096;
const BUDGET = 10_000;
const env = {
  INBOX_LIVECHAT_MAX_ATTACHMENT_BYTES: String(FILE_MAX),
  INBOX_LIVECHAT_UPLOAD_BYTES_PER_HOUR: String(BUDGET),
};
const ctx = await useTestContext({ env });
const tenant = await makeTenant(ctx.deps);

function upload(app: typeof ctx.app, key: string, headers: Record<string, string>, bytes: number) {
  const body = multipartBody({ filename: 'file.bin', bytes: Buffer.alloc(bytes, 7) });
  return app.inject({
    method: 'POST',
    url: `/v1/livechat/${key}/attachments`,
    headers: { ...headers, ...body.headers },
    payload: body.payload,
  });
}

const count = async (table: 'attachments' | 'attachment_chunks') =>
  Number(
    (
      await ctx.deps.db
        .selectFrom(table)
        .select((eb) => eb.fn.countAll().as('n'))
        .executeTakeFirstOrThrow()
    ).n,
  );

describe("a live chat visitor's files", () => {
  it('are at most INBOX_LIVECHAT_MAX_ATTACHMENT_BYTES (413, nothing kept); a tenant’s upload keeps the larger limit', async () => {
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const visitor = await startVisitor(ctx.app, widget.key);
    const before = [await count('attachments'), await count('attachment_chunks')];
    const over = await upload(ctx.app, widget.key, visitor.headers, FILE_MAX + 1);
    expect(over.statusCode, over.body).toBe(413);
    expect(over.json().error).toEqual({ code: 'payload_too_large', message: expect.stringContaining(String(FILE_MAX)) });
    expect([await count('attachments'), await count('attachment_chunks')]).toEqual(before);
    expect((await upload(ctx.app, widget.key, visitor.headers, FILE_MAX)).statusCode).toBe(201);

    const body = multipartBody({ filename: 'big.bin', bytes: Buffer.alloc(FILE_MAX + 1, 7) });
    const tenants = await ctx.app.inject({
      method: 'POST',
      url: '/v1/attachments',
      headers: { ...tenant.headers, ...body.headers },
      payload: body.payload,
    });
    expect(tenants.statusCode, tenants.body).toBe(201);
  });

  it('take at most INBOX_LIVECHAT_UPLOAD_BYTES_PER_HOUR from one widget, across visitors and processes, then 429', async () => {
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const other = await makeWidget(ctx.deps, tenant.workspace.id);
    // Refused files cost nothing: three 413s leave the whole budget.
    for (let i = 0; i < 3; i++) {
      const visitor = await startVisitor(ctx.app, widget.key);
      expect((await upload(ctx.app, widget.key, visitor.headers, FILE_MAX + 1)).statusCode).toBe(413);
    }
    for (let i = 0; i < 2; i++) {
      const visitor = await startVisitor(ctx.app, widget.key);
      expect((await upload(ctx.app, widget.key, visitor.headers, FILE_MAX)).statusCode).toBe(201);
    }
    // 8,192 bytes taken: a file that may be 4,096 bytes no longer fits, a small one still does.
    const visitor = await startVisitor(ctx.app, widget.key);
    const refused = await upload(ctx.app, widget.key, visitor.headers, FILE_MAX);
    expect(refused.statusCode, refused.body).toBe(429);
    expect(refused.json().error.code).toBe('rate_limited');
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThan(3500);
    expect(retryAfter).toBeLessThanOrEqual(3600);
    expect((await upload(ctx.app, widget.key, visitor.headers, 100)).statusCode).toBe(201);

    // A second api process on the same database counts the same budget.
    const second = await startTestContext({ env, database: ctx.database });
    try {
      const late = await startVisitor(second.app, widget.key);
      expect((await upload(second.app, widget.key, late.headers, FILE_MAX)).statusCode).toBe(429);
      // Another widget has a budget of its own.
      const elsewhere = await startVisitor(second.app, other.key);
      expect((await upload(second.app, other.key, elsewhere.headers, FILE_MAX)).statusCode).toBe(201);
    } finally {
      await second.close();
    }
  });

  it('cannot overrun the budget in parallel: each upload reserves what it may take before its first byte', async () => {
    const widget = await makeWidget(ctx.deps, tenant.workspace.id);
    const visitors = await Promise.all(Array.from({ length: 5 }, () => startVisitor(ctx.app, widget.key)));
    const statuses = await Promise.all(visitors.map((v) => upload(ctx.app, widget.key, v.headers, FILE_MAX).then((r) => r.statusCode)));
    // 10,000 bytes hold two files of 4,096 and not a third, whichever requests come first.
    expect(statuses.sort()).toEqual([201, 201, 429, 429, 429]);
  });
});
