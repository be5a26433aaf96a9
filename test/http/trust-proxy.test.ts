import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { testConfig, useTestContext } from '../helpers/app.js';

const ctx = await useTestContext();
const apps: FastifyInstance[] = [];
afterAll(async () => {
  for (const app of apps) await app.close();
});

/**
 * The app as configured by INBOX_TRUST_PROXY, with one extra route that answers `request.ip`:
 * the address the per-address login limit counts (admitLoginAttempt is handed request.ip).
 */
async function appTrusting(value: string | undefined): Promise<FastifyInstance> {
  const config = testConfig(value === undefined ? {} : { INBOX_TRUST_PROXY: value });
  const app = await buildApp({ ...ctx.deps, config });
  app.get('/test-only/ip', async (request) => ({ ip: request.ip }));
  await app.ready();
  apps.push(app);
  return app;
}

const ipSeen = async (app: FastifyInstance, remoteAddress: string, forwardedFor?: string) => {
  const res = await app.inject({
    method: 'GET',
    url: '/test-only/ip',
    remoteAddress,
    headers: forwardedFor ? { 'x-forwarded-for': forwardedFor } : {},
  });
  return (res.json() as { ip: string }).ip;
};

describe('INBOX_TRUST_PROXY', () => {
  it('unset: X-Forwarded-For is ignored, whoever sends it', async () => {
    const app = await appTrusting(undefined);
    expect(await ipSeen(app, '203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
    expect(await ipSeen(app, '127.0.0.1', '198.51.100.1')).toBe('127.0.0.1');
  });

  it('a list: only a listed proxy’s header is believed, and only its hops', async () => {
    const app = await appTrusting('10.0.0.0/8, 192.0.2.7');
    expect(await ipSeen(app, '10.1.2.3', '198.51.100.1')).toBe('198.51.100.1');
    expect(await ipSeen(app, '192.0.2.7', '198.51.100.2')).toBe('198.51.100.2');
    // an untrusted peer cannot choose the address it is counted under
    expect(await ipSeen(app, '203.0.113.9', '198.51.100.1')).toBe('203.0.113.9');
    // a client behind the proxy cannot either: its own X-Forwarded-For entry is one hop further
    expect(await ipSeen(app, '10.1.2.3', '1.1.1.1, 198.51.100.3')).toBe('198.51.100.3');
  });

  it('true: a proxy on loopback only', async () => {
    const app = await appTrusting('true');
    expect(await ipSeen(app, '127.0.0.1', '198.51.100.4')).toBe('198.51.100.4');
    expect(await ipSeen(app, '::1', '198.51.100.5')).toBe('198.51.100.5');
    expect(await ipSeen(app, '10.1.2.3', '198.51.100.6')).toBe('10.1.2.3');
  });
});
