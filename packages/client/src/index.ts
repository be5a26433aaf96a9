/**
 * A typed client for the service's JSON API, for programs, the console and proxies in front
 * of it (`import { tenantClient } from 'inbox/client'`). It walks both pagination shapes the
 * way the contract says they must be walked (README, "A client for programs"), passes `meta`
 * through untouched, and covers every tenant route, writes included.
 *
 * Its modules import nothing but each other, so the emitted declarations stand alone (no
 * server package is needed to compile against them); test/client/declarations.test.ts walks
 * their imports, and test/client/client-types.test.ts keeps the types equal to the server's
 * schemas.
 */

export { type OffsetPage, type OperatorClient, operatorClient } from './operator.js';
export { type ClientOptions, type Envelope, type FetchLike, InboxClientError, retryAfterMs } from './request.js';
export type { AbortSignalLike } from './runtime.js';
export { type CursorPage, type IdempotencyOptions, type ListQuery, type TenantClient, tenantClient } from './tenant.js';
export type * from './types.js';
export { type VerifiedWebhook, type VerifyWebhookInput, verifyWebhook, type WebhookEvent, type WebhookHeaders } from './webhooks.js';
