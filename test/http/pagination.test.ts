import { describe, expect, it } from 'vitest';
import { AppError, MALFORMED_CURSOR_MESSAGE } from '../../src/http/errors.js';
import {
  cursorPage,
  decodeCursor,
  decodeLogPosition,
  encodeCursor,
  encodeLogPosition,
  offsetMeta,
  parseCursorLimit,
  parseOffsetQuery,
  TENANTS_MAX_LIMIT,
} from '../../src/http/pagination.js';

describe('cursor limit (docs/api.md, "Pagination", cursor rule 1)', () => {
  it.each([
    [undefined, 25],
    ['', 25],
    ['abc', 25],
    ['0', 25],
    ['-5', 25],
    ['1', 1],
    ['25', 25],
    ['100', 100],
    ['101', 100],
    ['100000', 100],
  ])('limit %s → %i', (raw, expected) => {
    expect(parseCursorLimit(raw)).toBe(expected);
  });
});

describe('cursor encoding (docs/api.md, "Pagination", cursor rule 3)', () => {
  it('is base64url of <epochMs>:<id>', () => {
    const at = new Date('2026-01-02T03:04:05.678Z');
    const cursor = encodeCursor(at, 42);
    expect(Buffer.from(cursor, 'base64url').toString()).toBe(`${at.getTime()}:42`);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor)).toEqual({ at, id: 42 });
  });

  it.each([
    '!!!',
    Buffer.from('nocolon').toString('base64url'),
    Buffer.from('12:ab').toString('base64url'),
    Buffer.from(':1').toString('base64url'),
    'a'.repeat(300),
  ])('rejects %s with validation_failed 422', (raw) => {
    try {
      decodeCursor(raw);
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({ code: 'validation_failed', status: 422, message: MALFORMED_CURSOR_MESSAGE });
    }
  });
});

describe('cursorPage', () => {
  const rows = [1, 2, 3].map((id) => ({ id, at: new Date(1000 * id) }));
  it('has nextCursor only when more rows exist', () => {
    expect(cursorPage(rows, 3, (r) => r).meta).toEqual({});
    const page = cursorPage(rows, 2, (r) => r);
    expect(page.items).toHaveLength(2);
    expect(decodeCursor(page.meta.nextCursor!)).toEqual({ at: new Date(2000), id: 2 });
  });
});

describe('log positions (the event log)', () => {
  it('round-trips a position of 64-bit numbers and refuses anything else with the malformed-cursor message', () => {
    const position = { txid: '18446744073709551', seq: '9007199254740993' };
    expect(decodeLogPosition(encodeLogPosition(position))).toEqual(position);
    for (const raw of [
      '',
      'x y',
      Buffer.from('1:').toString('base64url'),
      Buffer.from('a:1').toString('base64url'),
      Buffer.from('1:9223372036854775808').toString('base64url'),
    ]) {
      expect(() => decodeLogPosition(raw)).toThrow(MALFORMED_CURSOR_MESSAGE);
    }
  });
});

describe('offset pages (docs/api.md, "Pagination", offset rules)', () => {
  it.each([
    [{}, 200, { page: 1, limit: 50, offset: 0 }],
    [{ limit: 'x', page: 'y' }, 200, { page: 1, limit: 50, offset: 0 }],
    [{ limit: '0' }, 200, { page: 1, limit: 1, offset: 0 }],
    [{ limit: '-3' }, 200, { page: 1, limit: 1, offset: 0 }],
    [{ limit: '500' }, 200, { page: 1, limit: 200, offset: 0 }],
    [{ limit: '5000' }, TENANTS_MAX_LIMIT, { page: 1, limit: 1000, offset: 0 }],
    [{ limit: '10', page: '3' }, 200, { page: 3, limit: 10, offset: 20 }],
    [{ page: '0' }, 200, { page: 1, limit: 50, offset: 0 }],
  ])('%j (max %i) → %j', (query, max, expected) => {
    expect(parseOffsetQuery(query, max)).toEqual(expected);
  });

  it('hasMore is true exactly when page * limit < total', () => {
    expect(offsetMeta({ page: 2, limit: 10, offset: 10 }, 21).hasMore).toBe(true);
    expect(offsetMeta({ page: 2, limit: 10, offset: 10 }, 20).hasMore).toBe(false);
    expect(offsetMeta({ page: 1, limit: 10, offset: 0 }, 0)).toEqual({ page: 1, limit: 10, total: 0, hasMore: false });
  });
});
