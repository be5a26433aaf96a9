import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { uuid7, uuid7Floor, uuid7Time } from '../../src/crypto/uuid7.js';

describe('uuid7', () => {
  it('carries the millisecond it was made at, readable back, and sorts by it', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 48 - 1 }), fc.integer({ min: 0, max: 2 ** 48 - 1 }), (a, b) => {
        const [x, y] = [uuid7(a), uuid7(b)];
        expect(x).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
        expect(uuid7Time(x)).toBe(a);
        if (a < b) expect(x < y && x < uuid7Floor(b)).toBe(true);
      }),
      { seed: 7, numRuns: 500 },
    );
  });

  it('ids of one millisecond, made around ids of others, each carry theirs and all differ', () => {
    const ids = [5, 5, 2 ** 40, 5, 0, 5].map((ms) => [ms, uuid7(ms)] as const);
    for (const [ms, id] of ids) expect(uuid7Time(id)).toBe(ms);
    expect(new Set(ids.map(([, id]) => id)).size).toBe(ids.length);
  });

  it('ids of one millisecond, many more than one draw of random bytes, all differ in every random digit', () => {
    const ids = Array.from({ length: 2000 }, () => uuid7(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^018bcfe5-6800-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    // Each random position takes every value it may: no digit is left fixed.
    for (const at of [15, 16, 17, 19, 20, 21, 22, ...Array.from({ length: 12 }, (_, i) => 24 + i)])
      expect(new Set(ids.map((id) => id[at])).size, `digit ${at}`).toBe(at === 19 ? 4 : 16);
  });

  it('has no time to read in any other UUID', () => {
    expect(uuid7Time(randomUUID())).toBeUndefined();
    expect(uuid7Time('not-a-uuid')).toBeUndefined();
  });
});
