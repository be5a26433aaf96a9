import { type Static, Type } from 'typebox';
import { errors } from './errors.js';

// ---- Cursor (keyset) pages: tenant-scoped lists, docs/api.md, "Pagination" ----

export const CURSOR_DEFAULT_LIMIT = 25;
export const CURSOR_MAX_LIMIT = 100;

export interface Cursor {
  /** Sort timestamp of the last item of the previous page, at millisecond precision. */
  at: Date;
  id: number;
}

/** Query string of every cursor-paged route: strings only, read by parseCursorQuery. */
export const CursorQuery = Type.Object({
  limit: Type.Optional(
    Type.String({ description: 'page size: default 25, at most 100 (larger is clamped); absent, non-numeric or ≤ 0 → 25' }),
  ),
  cursor: Type.Optional(
    Type.String({ description: 'meta.nextCursor of the previous page, passed back unchanged; absent for the first page' }),
  ),
});
export type CursorQuery = Static<typeof CursorQuery>;

/** Absent, non-numeric or not above 0 → 25; above 100 → 100, silently. */
export function parseCursorLimit(raw: unknown): number {
  const n = typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : typeof raw === 'number' ? raw : NaN;
  if (!Number.isFinite(n) || n <= 0) return CURSOR_DEFAULT_LIMIT;
  return Math.min(Math.floor(n) || CURSOR_DEFAULT_LIMIT, CURSOR_MAX_LIMIT);
}

/** Opaque cursor: base64url of `<epochMs>:<id>`. */
export function encodeCursor(at: Date, id: number): string {
  return Buffer.from(`${at.getTime()}:${id}`, 'utf8').toString('base64url');
}

/** Decodes a cursor or throws `validation_failed` (422) with the malformed-cursor message. */
export function decodeCursor(raw: string): Cursor {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(raw)) throw errors.malformedCursor();
  const match = /^(\d{1,15}):(\d{1,15})$/.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  if (!match) throw errors.malformedCursor();
  const ms = Number(match[1]);
  const id = Number(match[2]);
  if (!Number.isSafeInteger(ms) || !Number.isSafeInteger(id)) throw errors.malformedCursor();
  return { at: new Date(ms), id };
}

export interface CursorRequest {
  limit: number;
  cursor: Cursor | undefined;
}

export function parseCursorQuery(query: CursorQuery): CursorRequest {
  return {
    limit: parseCursorLimit(query.limit),
    cursor: query.cursor === undefined || query.cursor === '' ? undefined : decodeCursor(query.cursor),
  };
}

/**
 * Turns `limit + 1` fetched rows into a page. `nextCursor` is present exactly when another
 * row exists past this page; its absence is the only end-of-list signal.
 */
export function cursorPage<T>(
  rows: T[],
  limit: number,
  key: (row: T) => { at: Date; id: number },
): { items: T[]; meta: { nextCursor?: string } } {
  if (rows.length <= limit) return { items: rows, meta: {} };
  const items = rows.slice(0, limit);
  const last = key(items[items.length - 1] as T);
  return { items, meta: { nextCursor: encodeCursor(last.at, last.id) } };
}

// ---- Log positions: the event log, docs/outbound-webhooks.md, "Event log" ----
// A log grows at its end, so its reader needs the position after the last event it saw even
// on the last page: the log's `nextCursor` is present on every page that holds an event and
// absent only on an empty one (nothing new yet: keep the cursor you have and ask again).

/** A place in the event log: the writing transaction's id (xid8, as text) and the insertion order. */
export interface LogPosition {
  txid: string;
  seq: string;
}

/** Opaque: base64url of `<txid>:<seq>`. */
export function encodeLogPosition(position: LogPosition): string {
  return Buffer.from(`${position.txid}:${position.seq}`, 'utf8').toString('base64url');
}

/** The largest `seq` a position can name: the column is a bigint. */
const LOG_SEQ_MAX = 2n ** 63n - 1n;

/**
 * Decodes a log position or throws `validation_failed` (422) with the malformed-cursor message.
 * 19 digits always fit `txid` (an xid8, below 2^64), not always `seq`, which is checked.
 */
export function decodeLogPosition(raw: string): LogPosition {
  if (!/^[A-Za-z0-9_-]{1,200}$/.test(raw)) throw errors.malformedCursor();
  const match = /^(\d{1,19}):(\d{1,19})$/.exec(Buffer.from(raw, 'base64url').toString('utf8'));
  if (!match || BigInt(match[2]!) > LOG_SEQ_MAX) throw errors.malformedCursor();
  return { txid: match[1]!, seq: match[2]! };
}

// ---- Offset pages: operator lists, docs/api.md, "Pagination" ----

export const OFFSET_DEFAULT_LIMIT = 50;
export const OFFSET_MAX_LIMIT = 200;
export const TENANTS_MAX_LIMIT = 1000;

/** Query string of every offset-paged route: strings only, read by parseOffsetQuery. */
export const OffsetQuery = Type.Object({
  page: Type.Optional(Type.String({ description: 'the page, 1-based (absent or < 1 → 1)' })),
  limit: Type.Optional(Type.String({ description: 'page size: default 50, clamped into [1, 200] (1000 on the tenants list)' })),
});
export type OffsetQuery = Static<typeof OffsetQuery>;

export interface OffsetRequest {
  page: number;
  limit: number;
  offset: number;
}

/** `page` 1-based (absent or < 1 → 1); `limit` absent/non-numeric → 50, else clamped into [1, max]. */
export function parseOffsetQuery(query: OffsetQuery, maxLimit = OFFSET_MAX_LIMIT): OffsetRequest {
  const rawLimit = query.limit === undefined || query.limit.trim() === '' ? NaN : Number(query.limit);
  const limit = Number.isFinite(rawLimit) ? Math.min(Math.max(Math.floor(rawLimit), 1), maxLimit) : OFFSET_DEFAULT_LIMIT;
  const rawPage = query.page === undefined || query.page.trim() === '' ? NaN : Number(query.page);
  const page = Number.isFinite(rawPage) && rawPage >= 1 ? Math.min(Math.floor(rawPage), 1_000_000) : 1;
  return { page, limit, offset: (page - 1) * limit };
}

export function offsetMeta(request: OffsetRequest, total: number) {
  return { page: request.page, limit: request.limit, total, hasMore: request.page * request.limit < total };
}
