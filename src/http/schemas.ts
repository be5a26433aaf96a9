import { type TSchema, Type } from 'typebox';

/**
 * Response shapes shared by every route family. Routes declare their responses with these, so
 * fast-json-stringify writes exactly the listed fields (nothing unlisted can leak) and the
 * OpenAPI document is generated from the same schemas.
 */

/** A string from a fixed list (JSON Schema `enum`), typed as the list's members. */
export const StringEnum = <const T extends readonly string[]>(values: T, options: { description?: string } = {}) =>
  Type.Enum<[...T]>([...values], { type: 'string', ...options });

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);
export const Timestamp = Type.String({ format: 'date-time' });

export const Meta = Type.Object({ requestId: Type.String() });
export const CursorMeta = Type.Object({
  requestId: Type.String(),
  nextCursor: Type.Optional(Type.String({ description: 'absent on the last page: the only end-of-list signal' })),
});
export const OffsetMeta = Type.Object({
  requestId: Type.String(),
  page: Type.Integer({ minimum: 1 }),
  limit: Type.Integer({ minimum: 1 }),
  total: Type.Integer({ minimum: 0 }),
  hasMore: Type.Boolean(),
});

/** `{ data, meta }`, the `/v1` success body. */
export const Envelope = <T extends TSchema>(data: T) => Type.Object({ data, meta: Meta });
/** A cursor page (docs/api.md, "Pagination"): tenant lists and transcripts. */
export const CursorPage = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), meta: CursorMeta });
/** An offset page (docs/api.md, "Pagination"): operator lists. */
export const OffsetPage = <T extends TSchema>(item: T) => Type.Object({ data: Type.Array(item), meta: OffsetMeta });

/** Every error on every route family. */
export const ErrorBody = Type.Object(
  { error: Type.Object({ code: Type.String(), message: Type.String() }), meta: Meta },
  { title: 'Error' },
);

export const NoContent = Type.Null({ description: 'no content' });

/**
 * What a DELETE answers in its envelope: the id of what is gone. Every `/v1` route answers
 * `{ data, meta }` (SPEC §1), so a removal says what it removed instead of a bare 204.
 */
export const Deleted = Type.Object(
  { id: Type.Integer({ minimum: 1, description: 'the id of what was deleted' }), deleted: Type.Literal(true) },
  { title: 'Deleted' },
);
