import { describe, expect, it } from 'vitest';
import { nextSendAttempt } from '../../src/replies/send-policy.js';

describe('reply retry schedule (docs/replies.md)', () => {
  const now = new Date('2026-11-23T12:00:00Z');
  const delayOf = (attempt: number, retryAfter?: number) => {
    const at = nextSendAttempt(attempt, now, retryAfter);
    return at === null ? null : (at.getTime() - now.getTime()) / 1000;
  };

  it('tries again after 60 s, 5 min and 15 min, then gives up', () => {
    expect([1, 2, 3, 4].map((a) => delayOf(a))).toEqual([60, 300, 900, null]);
  });

  it("honours a provider's retry-after when it asks for longer, never shorter", () => {
    expect(delayOf(1, 120)).toBe(120);
    expect(delayOf(1, 5)).toBe(60);
    expect(delayOf(4, 30)).toBeNull();
  });

  it('honours a retry-after of at most a day, however long the provider asks for', () => {
    expect(delayOf(1, 86_400)).toBe(86_400);
    expect(delayOf(2, 99_999_999_999_999)).toBe(86_400);
  });
});
