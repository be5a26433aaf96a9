import { normaliseOrigin } from '../connections/allowed-origins.js';

/**
 * Whether a browser page of `origin` may call a widget's visitor routes: any origin when the
 * widget lists none; else one of its `allowedOrigins`, or this service's own origin (the
 * hosted page `GET /livechat/:widgetKey` is served from it), recognised by `Origin` naming
 * the host the request was sent to. `Origin: null` (a sandboxed frame, a file) passes only a
 * widget that allows any origin.
 */
export function originAllowed(allowed: readonly string[], origin: string, host: string | undefined): boolean {
  if (allowed.length === 0) return true;
  const normal = normaliseOrigin(origin);
  if (normal === null) return false;
  if (allowed.includes(normal)) return true;
  return host !== undefined && new URL(normal).host === host.toLowerCase();
}
