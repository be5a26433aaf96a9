import { describe, expect, it } from 'vitest';
import { useTestContext } from '../helpers/app.js';

const logLines: Record<string, unknown>[] = [];
const ctx = await useTestContext({ logLines });

describe('socket tokens in logs', () => {
  it('logs the socket URL with its token redacted', async () => {
    await ctx.app.inject({ method: 'GET', url: '/v1/realtime?token=very-secret-token&x=1' });
    const urls = logLines.map((l) => (l.req as { url?: string } | undefined)?.url).filter(Boolean);
    expect(urls).toContain('/v1/realtime?token=[redacted]&x=1');
    expect(JSON.stringify(logLines)).not.toContain('very-secret-token');
  });
});
