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
export { InboxClientError, type ClientOptions, type Envelope, type FetchLike } from './request.js';
export { tenantClient, type CursorPage, type IdempotencyOptions, type ListQuery, type TenantClient } from './tenant.js';
export { operatorClient, type OffsetPage, type OperatorClient } from './operator.js';
export type * from './types.js';
