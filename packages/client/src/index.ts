/**
 * @inbox/client: a typed client for the service's JSON API, for programs, the console and
 * proxies in front of it, and `verifyWebhook()` for its outbound webhooks. It walks both
 * pagination shapes the way the contract says they must be walked, passes `meta` through
 * untouched, covers every tenant route, writes included, and bounds every call (timeout,
 * abort signal, retries that honour `retry-after`).
 *
 * Its modules import nothing but each other, so it packs and installs on its own
 * (test/client/package.test.ts), and test/client/client-types.test.ts keeps the types equal
 * to the server's schemas.
 */

export { type OffsetPage, type OperatorClient, operatorClient } from './operator.js';
export { type ClientOptions, type Envelope, type FetchLike, InboxClientError, retryAfterMs } from './request.js';
export type { AbortSignalLike } from './runtime.js';
export { type CursorPage, type IdempotencyOptions, type ListQuery, type TenantClient, tenantClient } from './tenant.js';
export type * from './types.js';
export { type VerifiedWebhook, type VerifyWebhookInput, verifyWebhook, type WebhookEvent, type WebhookHeaders } from './webhooks.js';
