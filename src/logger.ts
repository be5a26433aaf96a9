import pino, { type Logger } from 'pino';

/** Headers and fields whose values never reach a log line. */
export const REDACT_PATHS = [
  'req.headers.authorization',
  'req.headers["x-api-key"]',
  'req.headers["x-service-admin-api-key"]',
  'req.headers["x-hub-signature-256"]',
  'req.headers["x-vendor-auth"]',
  'req.headers["x-service-signature"]',
  'req.headers["x-webhook-signature"]',
  'req.headers["x-gatewayone-signature"]',
  'req.headers["x-aggregator-signature"]',
  'req.headers["x-signature"]',
  'req.headers.cookie',
  'password',
  '*.password',
];

/** Requests as logged: no headers, and a `token` query parameter (the socket's) redacted. */
function serializeRequest(req: { method?: string; url?: string; ip?: string; host?: string }) {
  return { method: req.method, url: req.url?.replace(/([?&]token=)[^&]*/g, '$1[redacted]'), host: req.host, remoteAddress: req.ip };
}

export function createLogger(level: string, destination?: pino.DestinationStream): Logger {
  return pino({ level, redact: { paths: REDACT_PATHS, censor: '[redacted]' }, serializers: { req: serializeRequest } }, destination);
}

export type { Logger };
