import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { errorBody } from './envelope.js';
import { errors } from './errors.js';

/**
 * What Node's HTTP parser refuses before any route or hook runs (a malformed request line or
 * header, a bad Content-Length, headers over the size limit, a request not whole in time).
 * Fastify's default answers these in a body of its own (`{"error":"Bad Request",
 * "statusCode":400}`); this answers them in the one error envelope like every other error.
 * There is no request to name, so the request id is made here and sent as `x-request-id` too.
 */
export function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  // A reset connection is gone: nothing to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const e =
    err.code === 'ERR_HTTP_REQUEST_TIMEOUT'
      ? errors.clientError(408, 'the request did not arrive whole in time')
      : err.code === 'HPE_HEADER_OVERFLOW'
        ? errors.clientError(431, 'the request headers are larger than the server accepts')
        : errors.badRequest('the request is not well-formed HTTP');
  const requestId = randomUUID();
  const body = JSON.stringify(errorBody(requestId, e.code, e.message));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${e.status} ${STATUS_CODES[e.status]}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
        `Content-Type: application/json; charset=utf-8\r\nx-request-id: ${requestId}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(err);
}
