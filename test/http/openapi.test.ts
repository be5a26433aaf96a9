import { Validator } from '@seriousme/openapi-schema-validator';
import { describe, expect, it } from 'vitest';
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
    const result = await new Validator().validate(doc as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('serves a reference page at /docs', async () => {
    const res = await ctx.app.inject({ method: 'GET', url: '/docs/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
  });
});

