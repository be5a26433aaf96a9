import { type SelectQueryBuilder, sql } from 'kysely';
import { type CursorRequest, cursorPage, type OffsetRequest, offsetMeta } from '../http/pagination.js';

/**
 * A keyset sort: two columns, a timestamp and a unique id, newest first (or, with `ascending`,
 * soonest first). Named once per list; the page's cursor is read from the row fields of the
 * same names (the part after the table).
 */
export interface SortKey {
  at: string;
  id: string;
  ascending?: boolean;
}

export const BY_CREATED: SortKey = { at: 'created_at', id: 'id' };

export interface Page<T> {
  items: T[];
  meta: { nextCursor?: string };
}

// biome-ignore lint/suspicious/noExplicitAny: a page of any table's query; its rows are typed by O
type AnyQuery<O> = SelectQueryBuilder<any, any, O>;

/**
 * `query` narrowed to the rows after `cursor` in `sort` order (all of them without a cursor).
 * The cursor's id is compared as a bigint: a cursor may name any id of up to 15 digits, and an
 * `integer` id column would otherwise take it as an out-of-range parameter (a 500).
 */
export function afterCursor<Q extends AnyQuery<unknown>>(query: Q, sort: SortKey, cursor: CursorRequest['cursor']): Q {
  if (!cursor) return query;
  return query.where((eb) =>
    eb(eb.refTuple(sort.at, sort.id), sort.ascending ? '>' : '<', eb.tuple(cursor.at, sql<number>`${cursor.id}::bigint`)),
  ) as Q;
}

/**
 * One cursor page of `query` (docs/api.md, "Pagination"): rows after the cursor in `sort` order, `limit + 1`
 * fetched so that `nextCursor` is present exactly when another row exists.
 */
export async function keysetPage<O>(query: AnyQuery<O>, sort: SortKey, page: CursorRequest): Promise<Page<O>> {
  const rows = await afterCursor(query, sort, page.cursor)
    .orderBy(sort.at, sort.ascending ? 'asc' : 'desc')
    .orderBy(sort.id, sort.ascending ? 'asc' : 'desc')
    .limit(page.limit + 1)
    .execute();
  const at = sort.at.split('.').pop()!;
  const id = sort.id.split('.').pop()!;
  return cursorPage(rows, page.limit, (row) => ({
    at: (row as Record<string, unknown>)[at] as Date,
    id: (row as Record<string, unknown>)[id] as number,
  }));
}

/**
 * One offset page (docs/api.md, "Pagination") of a filtered base query: the rows `select` picks and orders,
 * and `total` counted over the same filtered set.
 */
export async function offsetPage<B extends AnyQuery<object>, O>(base: B, page: OffsetRequest, select: (q: B) => AnyQuery<O>) {
  const [items, total] = await Promise.all([
    select(base).limit(page.limit).offset(page.offset).execute(),
    base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow() as Promise<{ n: number }>,
  ]);
  return { items, meta: offsetMeta(page, total.n) };
}
