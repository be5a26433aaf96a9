import type { FastifyRequest } from 'fastify';

/** The `/v1` success body: `{ data, meta }`, `meta.requestId` always set. */
export function envelope<T, M extends object = Record<never, never>>(
  request: FastifyRequest,
  data: T,
  meta?: M,
): { data: T; meta: M & { requestId: string } } {
  return { data, meta: { requestId: request.id, ...(meta as M) } };
}

export function errorBody(requestId: string, code: string, message: string) {
  return { error: { code, message }, meta: { requestId } };
}
