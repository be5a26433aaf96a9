import { changesOf, recordAudit, type Trail } from '../audit/audit.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { describeRefusal, ipLiteral, refusedRange } from '../net/address-guard.js';
import { enforceRateLimit, type RateLimit } from '../rate-limits/rate-limit.js';
import { findDelivery, listAttempts, restartDelivery } from './deliveries.queries.js';
import { sealSecret } from './endpoint-secrets.js';
import {
  countEndpointsLocked,
  type EndpointPatch,
  type EndpointRow,
  findEndpoint,
  insertEndpoint,
  nextEndpointId,
  replaceSecret,
} from './endpoints.queries.js';
import { deliveryResource, endpointResource } from './endpoints.resources.js';
import { enqueueAttempts, newJobId } from './outbound.enqueue.js';
import { deliverEvents } from './outbox.js';
import { generateSecret, isValidSecret } from './signing.js';

/** How long a rotated-out secret still signs, by default and at most (docs/outbound-webhooks.md). */
export const DEFAULT_GRACE_SECONDS = 24 * 3600;
export const MAX_GRACE_SECONDS = 7 * 24 * 3600;

/**
 * `test` and `redeliver` each queue an attempt at the tenant's word: together at most 60 a
 * minute per workspace, counted in Postgres so the limit holds across api processes.
 */
export const ENDPOINT_ACTIONS_LIMIT: RateLimit = {
  name: 'webhook-actions',
  what: 'webhook test and redeliver calls',
  limit: 60,
  windowMs: 60_000,
};

/**
 * Checks a URL before it is stored: http(s), no credentials in it, and — unless private
 * addresses are allowed — no literal private address. A name is checked at every attempt,
 * when it is resolved (the address guard). The URL is kept as the caller wrote it (only
 * surrounding spaces cut): each attempt parses it again the same way, and the answer shows
 * the caller their own URL, not one with a slash or a lower-cased host added.
 */
export function checkEndpointUrl(raw: string, allowPrivate: boolean): string {
  const given = raw.trim();
  // The parser would silently drop a tab or line break; the URL kept must be the one checked.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (/[\x00-\x1f\x7f]/.test(given)) throw errors.validation('url: must not contain control characters (tabs, line breaks)');
  let url: URL;
  try {
    url = new URL(given);
  } catch {
    throw errors.validation('url: not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw errors.validation('url: must be an http or https URL');
  if (url.username || url.password) throw errors.validation('url: must not carry credentials; the signature authenticates each delivery');
  const literal = ipLiteral(url);
  const range = literal && !allowPrivate ? refusedRange(literal) : undefined;
  if (literal && range) throw errors.validation(`url: ${describeRefusal(literal, literal, range)}; webhooks go to public addresses only`);
  return given;
}

export interface NewEndpointInput {
  url: string;
  description?: string;
  events?: string[];
  enabled?: boolean;
  signatureScheme?: 'service' | 'standard';
  secret?: string;
}

export async function createEndpoint(deps: Deps, workspaceId: number, input: NewEndpointInput, trail: Trail) {
  const url = checkEndpointUrl(input.url, deps.config.allowPrivateWebhookUrls);
  if (input.secret !== undefined && !isValidSecret(input.secret))
    throw errors.validation('secret: expected whsec_ followed by base64 of 24 to 64 bytes');
  const secret = input.secret ?? generateSecret();
  const row = await deps.db.transaction().execute(async (trx) => {
    const max = deps.config.maxWebhookEndpoints;
    if ((await countEndpointsLocked(trx, workspaceId)) >= max) {
      throw errors.validation(`a workspace has at most ${max} webhook endpoints (INBOX_MAX_WEBHOOK_ENDPOINTS): delete one first`);
    }
    const id = await nextEndpointId(trx);
    const shown = changesOf(null, { ...input, url, secret: true }, ['secret']);
    await recordAudit(trx, trail, 'webhook_endpoint.created', { type: 'webhook_endpoint', id }, shown);
    return insertEndpoint(
      trx,
      {
        id,
        workspaceId,
        url,
        description: input.description ?? '',
        events: input.events ?? ['*'],
        enabled: input.enabled ?? true,
        scheme: input.signatureScheme ?? 'service',
        secretSealed: sealSecret(deps.secretKey, id, secret),
      },
      deps.now(),
    );
  });
  return { ...endpointResource(row), secret };
}

export function checkPatch(deps: Deps, patch: EndpointPatch): EndpointPatch {
  return patch.url === undefined ? patch : { ...patch, url: checkEndpointUrl(patch.url, deps.config.allowPrivateWebhookUrls) };
}

/**
 * A new secret, answered once. The old one goes on signing beside it for `graceSeconds`, so a
 * receiver that accepts any listed signature moves over without a failed delivery.
 */
export async function rotateSecret(deps: Deps, workspaceId: number, id: number, graceSeconds: number, trail: Trail) {
  return deps.db.transaction().execute(async (trx) => {
    const endpoint = await existingEndpoint(trx, workspaceId, id, true);
    const now = deps.now();
    const secret = generateSecret();
    const shown = changesOf({ secret: true }, { secret: true }, ['secret']);
    await recordAudit(trx, trail, 'webhook_endpoint.secret_rotated', { type: 'webhook_endpoint', id }, shown);
    const row = await replaceSecret(
      trx,
      id,
      {
        sealed: sealSecret(deps.secretKey, id, secret),
        previousSealed: graceSeconds > 0 ? endpoint.secret_sealed : null,
        previousExpiresAt: graceSeconds > 0 ? new Date(now.getTime() + graceSeconds * 1000) : null,
      },
      now,
    );
    return { ...endpointResource(row), secret };
  });
}

async function existingEndpoint(trx: Executor, workspaceId: number, id: number, lock = false): Promise<EndpointRow> {
  const endpoint = await findEndpoint(trx, workspaceId, id, lock);
  if (!endpoint) throw errors.notFound('webhook endpoint');
  return endpoint;
}

/** A `ping` to one endpoint, whatever its event filter (and even while it is disabled). */
export async function sendTest(deps: Deps, workspaceId: number, id: number) {
  return deps.db.transaction().execute(async (trx) => {
    // Locked: a deletion at the same time goes first (404 here) or waits for the ping's commit.
    const endpoint = await existingEndpoint(trx, workspaceId, id, true);
    const now = deps.now();
    await enforceRateLimit(trx, ENDPOINT_ACTIONS_LIMIT, workspaceId, now);
    const [delivery] = await deliverEvents(
      deps.boss,
      trx,
      [
        {
          event: { type: 'ping', workspaceId, data: { endpointId: endpoint.id, message: 'a test event from inbox' } },
          endpointIds: [endpoint.id],
        },
      ],
      now,
    );
    return deliveryAnswer(trx, workspaceId, delivery!.id);
  });
}

/** Sends a delivery again, with the same delivery id; its attempts so far stay in its log. */
export async function redeliver(deps: Deps, workspaceId: number, deliveryId: number) {
  return deps.db.transaction().execute(async (trx) => {
    const delivery = await findDelivery(trx, workspaceId, deliveryId);
    if (!delivery) throw errors.notFound('webhook delivery');
    if (!delivery.endpoint_enabled && delivery.event_type !== 'ping')
      throw errors.conflict('the endpoint is disabled: enable it (PATCH {"enabled": true}) first');
    const jobId = newJobId();
    // The update waits for a deletion of its endpoint at the same time, which takes the
    // delivery with it: then there is nothing to restart (404). It comes before the limit's
    // lock, as the deletion takes the delivery before its endpoint, which a test holds while it
    // waits for that lock; a 429 rolls it back.
    if (!(await restartDelivery(trx, { id: delivery.id, eventId: delivery.event_id }, jobId, deps.now())))
      throw errors.notFound('webhook delivery');
    await enforceRateLimit(trx, ENDPOINT_ACTIONS_LIMIT, workspaceId, deps.now());
    await enqueueAttempts(deps.boss, trx, [
      { deliveryId: delivery.id, eventId: delivery.event_id, endpointId: delivery.endpoint_id, jobId },
    ]);
    return deliveryAnswer(trx, workspaceId, delivery.id);
  });
}

async function deliveryAnswer(db: Executor, workspaceId: number, id: number) {
  const row = (await findDelivery(db, workspaceId, id))!;
  return deliveryResource(row, await listAttempts(db, [row.id]));
}
