import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, describe, expect, it } from 'vitest';
import { REFRESH_COOKIE } from '../../src/auth/refresh-cookie.js';
import { packageVersion } from '../../src/version.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { makeWidget } from '../helpers/livechat.js';

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

  it('answers every /v1 route but a CORS preflight with the { data, meta } envelope (SPEC §1), never a bare 204', async () => {
    const doc = (await document()) as unknown as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
    };
    const bodyOf = (schema: unknown): { properties?: Record<string, unknown> } | undefined => {
      const ref = (schema as { $ref?: string } | undefined)?.$ref;
      return ref ? doc.components.schemas[ref.replace('#/components/schemas/', '')] : (schema as { properties?: Record<string, unknown> });
    };
    const bare: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths)) {
      if (!path.startsWith('/v1/')) continue;
      for (const [method, op] of Object.entries(ops)) {
        if (method === 'options') continue;
        for (const [code, response] of Object.entries(op.responses ?? {})) {
          if (!/^2\d\d$/.test(code)) continue;
          const json = response.content?.['application/json']?.schema;
          const properties = bodyOf(json)?.properties ?? {};
          // A download (an attachment's bytes, an export's file) answers its own content type.
          if (!json && response.content) continue;
          if (!('data' in properties && 'meta' in properties)) bare.push(`${method.toUpperCase()} ${path} ${code}`);
        }
      }
    }
    expect(bare).toEqual([]);
  });

  it('answers a DELETE with the id of what it deleted, in the envelope', async () => {
    const tenant = await makeTenant(ctx.deps);
    const created = await ctx.app.inject({
      method: 'POST',
      url: '/v1/canned-responses',
      headers: tenant.headers,
      payload: { shortCode: 'bye', content: 'Goodbye' },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id;
    const res = await ctx.app.inject({ method: 'DELETE', url: `/v1/canned-responses/${id}`, headers: tenant.headers });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ data: { id, deleted: true }, meta: { requestId: res.headers['x-request-id'] } });
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

  it('gives every operation an operationId (unique) and its security, and serves this deployment', async () => {
    const doc = (await document()) as unknown as {
      servers: { url: string }[];
      components: { securitySchemes: Record<string, { name?: string }> };
      paths: Record<string, Record<string, { operationId?: string; security?: Record<string, string[]>[] }>>;
    };
    expect(doc.servers).toEqual([{ url: ctx.deps.config.publicUrl, description: expect.any(String) }]);
    expect(doc.components.securitySchemes.refreshCookie?.name).toBe(REFRESH_COOKIE);
    const operations = Object.entries(doc.paths).flatMap(([p, ops]) =>
      Object.entries(ops).map(([method, op]) => ({ method, path: p, op })),
    );
    expect(operations.filter(({ op }) => !op.operationId).map((o) => `${o.method} ${o.path}`)).toEqual([]);
    expect(new Set(operations.map(({ op }) => op.operationId)).size).toBe(operations.length);
    expect(operations.filter(({ op }) => !Array.isArray(op.security)).map((o) => `${o.method} ${o.path}`)).toEqual([]);
    for (const { op } of operations)
      for (const requirement of op.security!)
        for (const scheme of Object.keys(requirement)) expect(doc.components.securitySchemes).toHaveProperty(scheme);
    expect(doc.paths['/v1/threads/{id}/messages']!.get!.operationId).toBe('getV1ThreadsByIdMessages');
  });

  it('declares security the routes really ask for: without credentials, a secured operation is refused', async () => {
    const doc = (await document()) as unknown as { paths: Record<string, Record<string, { security: Record<string, string[]>[] }>> };
    // A real widget: an unknown key would be refused (404) before any guard.
    const tenant = await makeTenant(ctx.deps);
    const widget = await makeWidget(ctx.deps, tenant.workspace.id, { key: 'openapi-widget' });
    const wrong: string[] = [];
    for (const [p, ops] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(ops)) {
        const url = p.replace('{widgetKey}', widget.key).replace(/\{[^}]+\}/g, '1');
        const res = await ctx.app.inject({
          method: method.toUpperCase() as 'GET',
          url,
          ...(method === 'get' || method === 'delete' || method === 'options' ? {} : { payload: {} }),
        });
        const anonymousAllowed = op.security.length === 0 || op.security.some((r) => Object.keys(r).length === 0);
        const code = res.statusCode === 401 ? (res.json() as { error?: { code?: string } }).error?.code : undefined;
        // A body or query that does not validate may be refused (422) before the guard runs.
        if (!anonymousAllowed && res.statusCode !== 401 && res.statusCode !== 422)
          wrong.push(`${method} ${p}: ${res.statusCode} without credentials`);
        // Public operations may refuse a bad signature (invalid_api_key), never ask to sign in.
        if (anonymousAllowed && code === 'unauthorized') wrong.push(`${method} ${p}: declared public, asks for credentials`);
      }
    }
    expect(wrong).toEqual([]);
  });

  it('declares every timestamp a response carries (a field named …At) as an ISO 8601 date-time string', async () => {
    const doc = (await document()) as unknown as {
      paths: Record<string, Record<string, Operation>>;
      components: { schemas: Record<string, Schema> };
    };
    type Schema = { $ref?: string; type?: unknown; format?: string; properties?: Record<string, Schema>; items?: Schema; anyOf?: Schema[] };
    const resolve = (s: Schema): Schema => (s.$ref ? resolve(doc.components.schemas[s.$ref.split('/').pop()!]!) : s);
    const notDateTime: string[] = [];
    const seen = new Set<Schema>();
    const walk = (raw: Schema, at: string) => {
      const s = resolve(raw);
      if (seen.has(s)) return;
      seen.add(s);
      for (const [name, child] of Object.entries(s.properties ?? {})) {
        const field = resolve(child);
        const variants = (field.anyOf ?? [field]).map(resolve).filter((v) => v.type !== 'null');
        if (/At$/.test(name) && !variants.every((v) => v.type === 'string' && v.format === 'date-time')) notDateTime.push(`${at}.${name}`);
        walk(child, `${at}.${name}`);
      }
      if (s.items) walk(s.items, `${at}[]`);
      for (const v of s.anyOf ?? []) walk(v, at);
    };
    for (const [route, ops] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(ops))
        for (const [status, response] of Object.entries(op.responses ?? {})) {
          const schema = response.content?.['application/json']?.schema as Schema | undefined;
          if (schema) walk(schema, `${method.toUpperCase()} ${route} ${status}`);
        }
    expect(notDateTime).toEqual([]);
  });

  it('names its resources in components.schemas and refers to them', async () => {
    const doc = (await document()) as unknown as { components: { schemas: Record<string, unknown> }; 'x-unnamed'?: string[] };
    expect(doc['x-unnamed']).toBeUndefined();
    for (const name of ['Thread', 'Message', 'Contact', 'Connection', 'WebhookEndpoint', 'Attachment', 'ErrorBody'])
      expect(doc.components.schemas, name).toHaveProperty(name);
    const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.body).toContain('"$ref":"#/components/schemas/Thread"');
  });

  it('passes the Redocly linter (recommended rules, operationId and security as errors) with 0 errors', async () => {
    const work = mkdtempSync(path.join(tmpdir(), 'inbox-openapi-'));
    afterAll(() => rmSync(work, { recursive: true, force: true }));
    const res = await ctx.app.inject({ method: 'GET', url: '/openapi.json' });
    writeFileSync(path.join(work, 'openapi.json'), res.body);
    writeFileSync(path.join(work, 'redocly.yaml'), REDOCLY_CONFIG);
    const cli = path.resolve(import.meta.dirname, '../../node_modules/@redocly/cli/bin/cli.js');
    // No telemetry and no update check: the linter runs without the network.
    const env = { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', NO_COLOR: '1' };
    const out = await promisify(execFile)(process.execPath, [cli, 'lint', '--format=json', '--config', 'redocly.yaml', 'openapi.json'], {
      cwd: work,
      env,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((e: { stdout: string; stderr: string }) => e);
    const report = JSON.parse(out.stdout) as {
      totals: { errors: number; warnings: number };
      problems: { ruleId: string; severity: string; message: string; location: { pointer: string }[] }[];
    };
    const errors = report.problems.filter((p) => p.severity === 'error').map((p) => `${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(errors).toEqual([]);
    expect(report.totals.errors).toBe(0);
  });
});

/** Redocly's recommended rules, with what a client generator depends on raised to errors. */
const REDOCLY_CONFIG = `extends:
  - recommended
rules:
  operation-operationId: error
  operation-operationId-unique: error
  operation-operationId-url-safe: error
  security-defined: error
  no-empty-servers: error
  no-server-example.com: error
  no-unused-components: error
`;
