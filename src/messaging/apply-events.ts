import { enqueueFetchMedia } from '../attachments/fetch-media.enqueue.js';
import { runInboundRules } from '../automation/run-rules.js';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import { workInboundSla } from '../sla/inbound.js';
import { type Announcer, announce } from './announce.js';
import { byKey, type DeliveryEvents, planBatch, type Resolved } from './apply-plan.js';
import { writePlan } from './apply-upsert.js';
import { batchChanges } from './apply-views.js';
import { findConnectionsByAccount, findOutboundByExternalId } from './messaging.queries.js';
import { withoutOwnMail } from './own-mail.js';

export type { DeliveryEvents } from './apply-plan.js';

export interface DeliveryResolution {
  /**
   * The app the delivery belongs to: the one app its resolved events belong to, set even if the
   * delivery then fails (so that app's admin can see and requeue it). A body whose
   * events resolve to connections of several apps belongs to none: its row (raw body and all)
   * is shown to the operator only, never to a tenant whose events happen to be in it.
   */
  appId: string | null;
  /** Why the delivery cannot be applied, when it cannot. */
  error?: string;
}

/**
 * Resolves every delivery's events to connections. A delivery naming an account that no
 * workspace has connected cannot be applied; it fails like any processing error, so it can be
 * requeued once the account is connected. A receipt resolved by `sent_message` goes through the
 * message it names (sent through the delivery's integration) and can never claim an account;
 * one naming no such message resolves to nothing and is skipped.
 */
async function resolveConnections(db: Executor, given: DeliveryEvents[]) {
  const deliveries = given.map(ownAccountOnly);
  const wanted = new Map<string, { integrationKey: string; externalAccountId: string }>();
  const sentIds = new Map<string, Set<string>>();
  for (const d of deliveries) {
    for (const e of d.events) {
      if (e.type === 'status' && e.resolveBy === 'sent_message') {
        let ids = sentIds.get(d.integrationKey);
        if (!ids) {
          ids = new Set();
          sentIds.set(d.integrationKey, ids);
        }
        ids.add(e.externalMessageId);
      } else
        wanted.set(byKey(d.integrationKey, e.externalAccountId), {
          integrationKey: d.integrationKey,
          externalAccountId: e.externalAccountId,
        });
    }
  }
  const resolved: Resolved = { connections: new Map(), sentMessages: new Map() };
  for (const c of await findConnectionsByAccount(db, [...wanted.values()]))
    resolved.connections.set(byKey(c.integration_key, c.external_account_id), c);
  for (const [integrationKey, ids] of sentIds) {
    for (const m of await findOutboundByExternalId(db, integrationKey, [...ids])) {
      resolved.sentMessages.set(byKey(integrationKey, m.external_id), {
        connectionId: m.connection_id,
        account: m.external_account_id,
        appId: m.app_id,
      });
    }
  }
  for (let i = 0; i < deliveries.length; i++) deliveries[i] = ownSentMessagesOnly(deliveries[i]!, resolved);

  const resolutions = new Map<string, DeliveryResolution>();
  for (const d of deliveries) {
    const resolution: DeliveryResolution = { appId: null };
    const apps = new Set<string>();
    for (const e of d.events) {
      let app: string | undefined;
      if (e.type === 'status' && e.resolveBy === 'sent_message') {
        app = resolved.sentMessages.get(byKey(d.integrationKey, e.externalMessageId))?.appId;
      } else {
        const c = resolved.connections.get(byKey(d.integrationKey, e.externalAccountId));
        if (c) app = c.app_id;
        else resolution.error ??= `no connection for ${d.integrationKey} account "${e.externalAccountId}": connect it, then requeue`;
      }
      if (app !== undefined) apps.add(app);
    }
    resolution.appId = apps.size === 1 ? [...apps][0]! : null;
    resolutions.set(d.deliveryId, resolution);
  }
  return { resolutions, resolved, deliveries };
}

/** A delivery bound to one account without its events that name another (see DeliveryEvents.account). */
function ownAccountOnly(d: DeliveryEvents): DeliveryEvents {
  const account = d.account;
  if (account === undefined) return d;
  const own = d.events.filter((e) => (e.type === 'status' && e.resolveBy === 'sent_message') || e.externalAccountId === account);
  return own.length === d.events.length ? d : { ...d, events: own };
}

/** …and without its receipts for messages another account sent. */
function ownSentMessagesOnly(d: DeliveryEvents, resolved: Resolved): DeliveryEvents {
  const account = d.account;
  if (account === undefined) return d;
  const own = d.events.filter(
    (e) =>
      !(e.type === 'status' && e.resolveBy === 'sent_message') ||
      resolved.sentMessages.get(byKey(d.integrationKey, e.externalMessageId))?.account === account,
  );
  return own.length === d.events.length ? d : { ...d, events: own };
}

/**
 * Applies deliveries and announces what they changed, in the caller's transaction: every
 * delivery is resolved to its connections (see DeliveryResolution), and the events of each
 * delivery that resolved are applied, set-based, together with those of the others. A
 * delivery that did not resolve changes nothing. The one entry for a channel's events, the
 * webhook worker's and live chat's alike. Then the automation rules the batch fired run, in
 * the same transaction (docs/automation.md).
 */
export async function applyDeliveries(
  deps: Deps,
  trx: Executor,
  deliveries: DeliveryEvents[],
  now: Date,
): Promise<Map<string, DeliveryResolution>> {
  const { resolutions, changes, bare } = await applyDeliveriesUnannounced(deps, trx, deliveries, now);
  await announce(deps, trx, changes, now, { bare });
  await runInboundRules(deps, trx, changes, now);
  return resolutions;
}

/**
 * applyDeliveries without the announcement: for a caller that completes what was applied
 * before it is told (live chat puts a visitor's uploads on the new message), then calls
 * `announce` and `runInboundRules` with `changes` in the same transaction. Downloads of the attachments it wrote
 * `pending` are queued here, with the rest of the write.
 */
export async function applyDeliveriesUnannounced(deps: Announcer, trx: Executor, deliveries: DeliveryEvents[], now: Date) {
  const { resolutions, resolved, deliveries: bound } = await resolveConnections(trx, deliveries);
  const applicable = await withoutOwnMail(
    trx,
    bound.filter((d) => !resolutions.get(d.deliveryId)!.error),
    resolved,
  );
  const plan = planBatch(applicable, resolved);
  const written = await writePlan(trx, plan, now);
  // SLA clocks and away replies (docs/sla.md): nothing at all unless a connection asks for them.
  const away =
    plan.sla.size === 0 && plan.awayMessages.size === 0
      ? []
      : await workInboundSla(
          deps,
          trx,
          {
            threads: [...written.threads.values(), ...written.touched],
            reopened: new Set(written.work.reopened),
            withNewMessage: new Set(written.messages.map((m) => m.thread_id)),
            answerable: new Set(written.messages.filter((m) => !m.email?.automatic).map((m) => m.thread_id)),
            newMessageIds: written.messages.map((m) => m.id),
            sla: plan.sla,
            awayMessages: plan.awayMessages,
            integrationOf: plan.integrationOf,
          },
          now,
        );
  const changes = batchChanges(plan, written, now);
  for (const message of away) {
    changes.push({ type: 'message.created', message });
    written.bare.add(message.id);
  }
  // The bytes are downloaded later, by the fetch-media worker, never inside this transaction.
  await enqueueFetchMedia(
    deps.boss,
    trx,
    written.attachmentIds.map((attachmentId) => ({ attachmentId, attempt: 1 })),
  );
  /** `bare`: the messages inserted with no attachment, whose attachments announce need not read. */
  return { resolutions, changes, bare: written.bare };
}
