import type { FastifyRequest } from 'fastify';

export interface Meta {
  requestId: string;
  [key: string]: unknown;
}

/** The `/v1` success body: `{ data, meta }`, `meta.requestId` always set. */
export function envelope<T>(request: FastifyRequest, data: T, meta: Record<string, unknown> = {}): { data: T; meta: Meta } {
  return { data, meta: { requestId: request.id, ...meta } };
}

export function errorBody(requestId: string, code: string, message: string) {
  return { error: { code, message }, meta: { requestId } };
}
