import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
import { packageVersion } from '../../src/version.js';
import { useTestContext } from '../helpers/app.js';

const ctx = await useTestContext();

interface Operation {
  responses?: Record<string, { description?: string; content?: Record<string, { schema?: unknown }> }>;
}

async function document() {
  const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  return res.json() as { openapi: string; paths: Record<string, Record<string, Operation>> };
}

describe('OpenAPI document', () => {
  it('is a valid OpenAPI 3.1 document', async () => {
    const doc = await document();
    expect(doc.openapi).toBe('3.1.0');
    expect((doc as unknown as { info: { version: string } }).info.version).toBe(packageVersion());
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('declares a success response schema for every route, and the error body for its errors', async () => {
    const doc = await document();
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(operations.length).toBeGreaterThan(30);
    const missing = operations.filter(({ op }) => {
      const success = Object.entries(op.responses ?? {}).filter(([code]) => /^2\d\d$/.test(code));
      // A declared 204 has nothing to describe; every other success must carry its schema.
      return success.length === 0 || success.some(([code, r]) => code !== '204' && !r.content);
    });
    expect(missing.map((m) => m.route)).toEqual([]);
    for (const { route, op } of operations) {
      expect(op.responses?.['4XX']?.content?.['application/json']?.schema, route).toEqual({ $ref: '#/components/schemas/ErrorBody' });
    }
  });

  it('gives every operation a summary and every parameter (path, query, header) a description', async () => {
    const doc = (await document()) as unknown as {
      paths: Record<string, Record<string, { summary?: string; parameters?: { in: string; name: string; description?: string }[] }>>;
    };
    const operations = Object.entries(doc.paths).flatMap(([path, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ route: `${method.toUpperCase()} ${path}`, op })),
    );
    expect(operations.length).toBeGreaterThan(30);
    expect(operations.filter(({ op }) => !op.summary?.trim()).map((o) => o.route)).toEqual([]);
    const undescribed = operations.flatMap(({ route, op }) =>
      (op.parameters ?? []).filter((p) => !p.description?.trim()).map((p) => `${route} ${p.in}:${p.name}`),
    );
    expect(undescribed).toEqual([]);
    // The idempotency key a client author must know about is documented where it is taken.
    const reply = doc.paths['/v1/threads/{id}/messages']!.post!;
    expect(reply.parameters?.find((p) => p.in === 'header' && p.name === 'idempotency-key')?.description).toMatch(/24 h/);
  });

  it('serves a reference page at /docs', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});
