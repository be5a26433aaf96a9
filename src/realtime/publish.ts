import { sql } from 'kysely';
import { type Executor, PREPARED } from '../db/database.js';
import { packedParams, unpacked, withPackedTexts } from '../db/packed-texts.js';
import { nameJson, numberJson, type Serialise } from '../text/json-once.js';
import { truncate } from '../text/truncate.js';

/** The one Postgres channel every api process LISTENs on for tenant events. */
export const REALTIME_CHANNEL = 'inbox_realtime';

/** Where a thread was (its team and assignee), which decides who sees it (threads/visibility.ts). */
export interface ThreadPlace {
  teamId: number | null;
  assigneeId: number | null;
}

export interface RealtimeEvent {
  /** e.g. `message.created`, `message.updated`, `thread.updated`, `session.revoked`. */
  type: string;
  workspaceId: number;
  /** When set, only this user's sockets receive the event. */
  targetUserId?: number;
  data: Record<string, unknown>;
  /** Set when the event was cut down to fit a NOTIFY: `data` then holds only ids. */
  truncated?: true;
  /**
   * A `thread.updated` of a change that moved the thread (its team or assignee): where it was.
   * The hub tells a user who saw it there and does not now that it left; sockets never get it.
   */
  formerly?: ThreadPlace;
}

/**
 * Postgres refuses a NOTIFY payload of 8000 bytes or more, and the refusal fails the whole
 * transaction (a worker's batch, a user's write). Payloads are kept under this, with room.
 */
export const NOTIFY_MAX_BYTES = 7_900;
/** Longer strings in `data` (a preview, a provider's error text) are cut to this many characters. */
export const EVENT_STRING_MAX_CHARS = 500;

function truncateStrings(value: unknown): { value: unknown; cut: boolean } {
  if (typeof value === 'string') {
    return value.length > EVENT_STRING_MAX_CHARS
      ? { value: `${truncate(value, EVENT_STRING_MAX_CHARS - 1)}…`, cut: true }
      : { value, cut: false };
  }
  if (Array.isArray(value)) {
    const items = value.map(truncateStrings);
    return { value: items.map((i) => i.value), cut: items.some((i) => i.cut) };
  }
  if (typeof value === 'object' && value !== null) {
    const entries = Object.entries(value).map(([k, v]) => [k, truncateStrings(v)] as const);
    return { value: Object.fromEntries(entries.map(([k, v]) => [k, v.value])), cut: entries.some(([, v]) => v.cut) };
  }
  return { value, cut: false };
}

/** `id` and `…Id` fields that are numbers or short strings: what a client needs to refetch. */
function idsOnly(data: Record<string, unknown>): Record<string, unknown> {
  const isId = (v: unknown) => typeof v === 'number' || (typeof v === 'string' && v.length <= 64);
  return Object.fromEntries(Object.entries(data).filter(([k, v]) => (k === 'id' || k.endsWith('Id')) && isId(v)));
}

/**
 * An event's JSON with `data` as `serialise` writes it, the keys in the order JSON.stringify
 * writes an event made as `{ type, workspaceId, data }` (and then its target, the rest).
 */
function eventJson(event: RealtimeEvent, serialise: Serialise): string {
  const target = event.targetUserId === undefined ? '' : `,"targetUserId":${JSON.stringify(event.targetUserId)}`;
  const truncated = event.truncated ? ',"truncated":true' : '';
  const formerly = event.formerly === undefined ? '' : `,"formerly":${JSON.stringify(event.formerly)}`;
  // The type's JSON is written once per process.
  return `{"type":${nameJson(event.type)},"workspaceId":${numberJson(event.workspaceId)},"data":${serialise(event.data)}${target}${truncated}${formerly}}`;
}

/**
 * The JSON payload of an event, never over NOTIFY_MAX_BYTES: long strings are cut first;
 * an event still too large goes out in a minimal form (type, workspace, target, ids only),
 * both marked `truncated: true` so a client knows to refetch. `serialise`: the data's JSON,
 * when the caller has it already (see jsonOnce).
 */
export function notifyPayload(event: RealtimeEvent, serialise?: Serialise): string {
  const json = serialise ? eventJson(event, serialise) : JSON.stringify(event);
  // A UTF-16 unit is at most 3 bytes of UTF-8: most payloads are short enough not to be measured.
  if (json.length * 3 <= NOTIFY_MAX_BYTES || Buffer.byteLength(json) <= NOTIFY_MAX_BYTES) return json;
  const { value: data, cut } = truncateStrings(event.data);
  const shortened = JSON.stringify({ ...event, data, ...(cut ? { truncated: true } : {}) });
  if (cut && Buffer.byteLength(shortened) <= NOTIFY_MAX_BYTES) return shortened;
  const minimal: RealtimeEvent = {
    type: event.type.slice(0, 100),
    workspaceId: event.workspaceId,
    data: idsOnly(event.data),
    truncated: true,
  };
  if (event.targetUserId !== undefined) minimal.targetUserId = event.targetUserId;
  if (event.formerly !== undefined) minimal.formerly = event.formerly;
  return JSON.stringify(minimal);
}

/**
 * Publishes a tenant event through NOTIFY. Called with a transaction, the event is sent
 * only if and when that transaction commits, so a listener never sees a rolled-back write.
 * Send ids and the few fields a UI needs, not whole bodies; anything larger is cut down
 * (see notifyPayload) rather than failing the transaction.
 */
export async function publishEvent(db: Executor, event: RealtimeEvent): Promise<void> {
  await sql`SELECT pg_notify(${REALTIME_CHANNEL}, ${notifyPayload(event)})`.execute(db);
}

/**
 * Not sent to any socket: what these users may see changed wholesale (a team joined or left,
 * `restrictAgentsToTeams` switched, the admin role given or taken; docs/teams.md). Every hub
 * closes their sockets with 1012, and clients reconnect and read their lists again.
 */
export const SIGHT_CHANGED = 'sight.changed';

/**
 * Publishes SIGHT_CHANGED for `users` of the workspace (all of them with 'everyone'), at the
 * commit of `db`'s transaction. A list too long for a NOTIFY arrives without its ids, and the
 * hubs then close every socket of the workspace.
 */
export async function publishSightChanged(db: Executor, workspaceId: number, users: number[] | 'everyone'): Promise<void> {
  if (users !== 'everyone' && users.length === 0) return;
  await publishEvent(db, {
    type: SIGHT_CHANGED,
    workspaceId,
    // Addressed to no user (ids start at 1): a hub of a version before SIGHT_CHANGED, still
    // running during a rolling upgrade, sends a targeted event only to its target, so it drops
    // this one instead of sending every socket of the workspace a frame it is not meant to see.
    targetUserId: SIGHT_CHANGED_TARGET,
    data: users === 'everyone' ? {} : { userIds: users },
  });
}

/** The targetUserId of SIGHT_CHANGED: no user's id (publishSightChanged). */
export const SIGHT_CHANGED_TARGET = 0;

/**
 * Publishes many events with one statement (the worker's batches); same commit rule. The
 * payloads are packed into one binary parameter (withPackedTexts), in order: a listener reads
 * each as notifyPayload made it.
 */
export async function publishEvents(db: Executor, events: RealtimeEvent[], serialise?: Serialise): Promise<void> {
  if (events.length === 0) return;
  await withPackedTexts(
    events.map((e) => notifyPayload(e, serialise)),
    (packed) => {
      const { bytes, starts, lengths } = packedParams(packed);
      return sql`${PREPARED}
        SELECT pg_notify(${REALTIME_CHANNEL}, ${unpacked(bytes, 's', 'l')})
        FROM unnest(${starts}, ${lengths}) WITH ORDINALITY AS v(s, l, n) ORDER BY n`.execute(db);
    },
  );
}
