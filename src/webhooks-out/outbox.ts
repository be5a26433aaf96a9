import type { PgBoss } from 'pg-boss';
import { uuid7 } from '../crypto/uuid7.js';
import type { Executor } from '../db/database.js';
import type { OutboundEvent, OutboundEventType } from '../messaging/events.js';
import { nameJson, numberJson, type Serialise } from '../text/json-once.js';
import { wellFormedJson } from '../text/well-formed.js';
import { insertDeliveries, insertEvents, type NewEvent } from './deliveries.queries.js';
import { findSubscribedEndpoints } from './endpoints.queries.js';
import { enqueueAttempts, jobIdsFor } from './outbound.enqueue.js';

/** The characters of a public event id being made: `evt_` and 32 hex digits. */
const publicId = Buffer.from(`evt_${'0'.repeat(32)}`, 'latin1');
const DASH = 0x2d;

/**
 * The public id of an event: `evt_` and its UUIDv7 without dashes. A canonical UUID (every id
 * uuid7 makes) has its characters copied past its four dashes and read as one string, where
 * five slices pasted together made nine: the worker names 2.4 events a delivery.
 */
export function publicEventId(id: string): string {
  if (
    id.length === 36 &&
    id.charCodeAt(8) === DASH &&
    id.charCodeAt(13) === DASH &&
    id.charCodeAt(18) === DASH &&
    id.charCodeAt(23) === DASH
  ) {
    let at = 4;
    for (let i = 0; i < 36; i++) {
      if (i === 8 || i === 13 || i === 18 || i === 23) continue;
      const c = id.charCodeAt(i);
      // Only ASCII is copied as a byte as it is; any other text takes the general way.
      if (c > 0x7f) return `evt_${id.slice(0, 8)}${id.slice(9, 13)}${id.slice(14, 18)}${id.slice(19, 23)}${id.slice(24)}`;
      publicId[at++] = c;
    }
    return publicId.toString('latin1');
  }
  return `evt_${id.replaceAll('-', '')}`;
}

/** The ISO text of the last time an event was made at: the events of a batch share one. */
let lastAt = Number.NaN;
let lastAtIso = '';
function isoOf(at: Date): string {
  const t = at.getTime();
  if (t !== lastAt) {
    lastAtIso = at.toISOString();
    lastAt = t;
  }
  return lastAtIso;
}

/**
 * The exact body every attempt of an event's deliveries sends: the text JSON.stringify writes
 * for `{ id, type, createdAt, workspaceId, data }`, with `data` as `serialise` writes it. The
 * workspace id, an integer, prints as JSON.stringify writes it; the type's JSON and the time's
 * text are written once, not once per event.
 */
export function eventBody(id: string, event: OutboundEvent, at: Date, serialise: Serialise = JSON.stringify): string {
  return `{"id":"${publicEventId(id)}","type":${nameJson(event.type)},"createdAt":"${isoOf(at)}","workspaceId":${numberJson(event.workspaceId)},"data":${dataJson(event.data, serialise)}}`;
}

/**
 * `data` as `serialise` writes it, unless that holds a lone surrogate's `\udXXX` escape (a
 * client's text before Postgres made it U+FFFD): then with U+FFFD in its place, as the rows
 * keep it, so the stored body stays a value Postgres reads as jsonb (erasure searches them).
 */
function dataJson(data: object, serialise: Serialise): string {
  const json = serialise(data);
  return json.includes('\\ud') ? wellFormedJson(data) : json;
}

/** The enabled endpoints of some workspaces and what each subscribes to: read once, asked per event. */
export interface Subscriptions {
  /** The endpoints an event of `type` in `workspaceId` goes to. */
  endpointsFor(workspaceId: number, type: OutboundEventType): readonly number[];
}

/** The endpoints of an event none subscribes to: most events of a batch, one array for all. */
const NO_ENDPOINTS: readonly number[] = Object.freeze([]);

export async function findSubscriptions(trx: Executor, workspaceIds: number[]): Promise<Subscriptions> {
  const endpoints = await findSubscribedEndpoints(trx, [...new Set(workspaceIds)]);
  return {
    // A loop, not filter and map: two arrays an event, empty for most, were garbage at once.
    endpointsFor: (workspaceId, type) => {
      let ids: number[] | undefined;
      for (const ep of endpoints) {
        if (ep.workspace_id !== workspaceId || !(ep.events.includes('*') || ep.events.includes(type))) continue;
        if (ids) ids.push(ep.id);
        else ids = [ep.id];
      }
      return ids ?? NO_ENDPOINTS;
    },
  };
}

/**
 * Writes outbound events into the caller's transaction (the outbox): every event joins the
 * workspace's event log (`GET /v1/events`, kept for INBOX_RETENTION_DAYS whether or not an
 * endpoint exists), and for each, one delivery per enabled endpoint of its workspace
 * subscribed to its type (or to `*`), with the job of each first attempt. The change that
 * caused an event and its deliveries commit together: none is lost, none is sent for a
 * rolled-back change. `subscriptions`: the endpoints, when the caller has read them already;
 * `serialise`: the events' data as JSON, when the caller shares it with other events.
 */
export async function writeOutbox(
  boss: PgBoss,
  trx: Executor,
  events: OutboundEvent[],
  at: Date,
  subscriptions?: Subscriptions,
  serialise?: Serialise,
): Promise<void> {
  if (events.length === 0) return;
  const subscribed =
    subscriptions ??
    (await findSubscriptions(
      trx,
      events.map((e) => e.workspaceId),
    ));
  const targets = events.map((e) => ({ event: e, endpointIds: subscribed.endpointsFor(e.workspaceId, e.type) }));
  await deliverEvents(boss, trx, targets, at, serialise);
}

/** Writes events with the endpoints each goes to (the outbox's second half; a ping names its endpoint). */
export async function deliverEvents(
  boss: PgBoss,
  trx: Executor,
  targets: { event: OutboundEvent; endpointIds: readonly number[] }[],
  at: Date,
  serialise?: Serialise,
) {
  const rows: NewEvent[] = [];
  const byEndpoint = new Map<number, string[]>();
  for (const { event, endpointIds } of targets) {
    const id = uuid7(at.getTime());
    rows.push({ id, workspaceId: event.workspaceId, type: event.type, body: eventBody(id, event, at, serialise) });
    for (const endpointId of endpointIds) {
      const ids = byEndpoint.get(endpointId);
      if (ids) ids.push(id);
      else byEndpoint.set(endpointId, [id]);
    }
  }
  if (rows.length === 0) return [];
  // Each endpoint's deliveries in jobs of up to JOB_DELIVERIES, in the order of their events.
  const deliveries = [...byEndpoint.entries()].flatMap(([endpointId, eventIds]) => {
    const jobIds = jobIdsFor(eventIds.length);
    return eventIds.map((eventId, n) => ({ endpointId, eventId, jobId: jobIds[n]! }));
  });
  await insertEvents(trx, rows, at);
  if (byEndpoint.size === 0) return [];
  const inserted = await insertDeliveries(trx, deliveries, at);
  await enqueueAttempts(
    boss,
    trx,
    inserted.map((d) => ({ deliveryId: d.id, eventId: d.event_id, endpointId: d.endpoint_id, jobId: d.job_id })),
  );
  return inserted;
}
