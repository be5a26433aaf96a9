import type { FastifyRequest } from 'fastify';

/** The `/v1` success body: `{ data, meta }`, `meta.requestId` always set. */
export function envelope<T, M extends object = Record<never, never>>(
  request: FastifyRequest,
  data: T,
  meta?: M,
): { data: T; meta: M & { requestId: string } } {
  return { data, meta: { requestId: request.id, ...(meta as M) } };
}

/** A DELETE's answer (schemas.ts `Deleted`): `{ data: { id, deleted: true }, meta }`. */
export function deleted(request: FastifyRequest, id: number) {
  return envelope(request, { id, deleted: true as const });
}

export function errorBody(requestId: string, code: string, message: string) {
  return { error: { code, message }, meta: { requestId } };
}
