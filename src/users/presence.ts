import { type Kysely, sql } from 'kysely';
import type { PgBoss } from 'pg-boss';
import type { Executor } from '../db/database.js';
import type { DB } from '../db/types.js';
import type { Deps } from '../deps.js';
import { jobsIn, type QueueDefinition } from '../jobs/queue.js';
import { announceUsers } from './user-events.js';

/**
 * Who is connected, across api processes (docs/teams.md "Availability and routing"): each
 * open realtime socket is a row of `user_sockets` that its process's heartbeat keeps alive
 * (`expires_at` two beats ahead). A socket that closes deletes its row; one whose process
 * died stops being refreshed, and the next heartbeat of any process deletes it. When a
 * user's last socket goes, `users.disconnected_at` is set and a job set for `offlineAfterMs`
 * later sets them `offline` unless a socket came back meanwhile (which clears it).
 */

/** How long after a user's last socket went they are set `offline`. */
export const OFFLINE_AFTER_MS = 120_000;

export interface PresenceTimings {
  /** The realtime hub's heartbeat: a socket two beats unrefreshed is gone. */
  heartbeatMs: number;
  offlineAfterMs: number;
}

export interface SocketRow {
  processId: string;
  socketId: string;
  userId: number;
  workspaceId: number;
}

/** The queue that sets a user offline once their last socket has been gone long enough. */
export const USER_OFFLINE_QUEUE = 'user-offline';

/** `disconnectedAt`: the moment the job is about; a socket that returned since clears it. */
export interface OfflineJob {
  userId: number;
  disconnectedAt: string;
}

const liveUntil = (at: Date, t: PresenceTimings) => new Date(at.getTime() + 2 * t.heartbeatMs);

/**
 * Records an opened socket and clears the user's disconnection. Announces `user.updated`
 * when it is their only live socket (they just became `connected`).
 */
export async function recordSocket(deps: Deps, socket: SocketRow, t: PresenceTimings): Promise<void> {
  const at = deps.now();
  await deps.db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ was: boolean }>`
      WITH ins AS (
        INSERT INTO user_sockets (process_id, socket_id, user_id, workspace_id, expires_at)
        VALUES (${socket.processId}, ${socket.socketId}, ${socket.userId}, ${socket.workspaceId}, ${liveUntil(at, t)})
        ON CONFLICT (process_id, socket_id) DO UPDATE SET expires_at = EXCLUDED.expires_at
      ), upd AS (
        UPDATE users SET disconnected_at = NULL WHERE id = ${socket.userId} AND disconnected_at IS NOT NULL
      )
      SELECT EXISTS (SELECT 1 FROM user_sockets WHERE user_id = ${socket.userId} AND expires_at > ${at}) AS was`.execute(trx);
    if (!rows[0]!.was) await announceUsers(trx, [socket.userId], at);
  });
}

/**
 * Forgets closed sockets: one (its row), or with `socket` null every socket of the process (a
 * process shutting down). Users left with no live socket are disconnected from now:
 * announced, and the offline job queued.
 */
export async function forgetSockets(deps: Deps, processId: string, socket: SocketRow | null, t: PresenceTimings): Promise<void> {
  const at = deps.now();
  await deps.db.transaction().execute(async (trx) => {
    // The statement sees user_sockets as before its DELETE: the deleted rows are left out by hand.
    const { rows } = await sql<{ id: number }>`
      WITH del AS (
        DELETE FROM user_sockets
        WHERE process_id = ${processId} ${socket === null ? sql`` : sql`AND socket_id = ${socket.socketId}`}
        RETURNING user_id
      )
      UPDATE users u SET disconnected_at = ${at}
      WHERE u.id IN (SELECT user_id FROM del)
        AND NOT EXISTS (
          SELECT 1 FROM user_sockets s
          WHERE s.user_id = u.id AND s.expires_at > ${at}
            AND NOT (s.process_id = ${processId} ${socket === null ? sql`` : sql`AND s.socket_id = ${socket.socketId}`})
        )
      RETURNING u.id`.execute(trx);
    await disconnected(deps.boss, trx, rows, at, t);
  });
}

async function disconnected(boss: PgBoss, trx: Executor, users: { id: number }[], at: Date, t: PresenceTimings) {
  if (users.length === 0) return;
  await announceUsers(
    trx,
    users.map((u) => u.id),
    at,
  );
  const startAfter = new Date(at.getTime() + t.offlineAfterMs);
  for (const u of users) {
    const job: OfflineJob = { userId: u.id, disconnectedAt: at.toISOString() };
    await boss.send(USER_OFFLINE_QUEUE, job, { db: jobsIn(trx), startAfter });
  }
}

/**
 * A heartbeat's bookkeeping: pushes the expiry of this process's sockets two beats ahead
 * (recreating a row another process expired while this one stalled), deletes the rows of
 * sockets nobody refreshed (their process died) and disconnects their users, and sets
 * offline anyone disconnected for `offlineAfterMs` whose job was lost.
 */
export async function beatSockets(deps: Deps, processId: string, held: SocketRow[], t: PresenceTimings): Promise<void> {
  const at = deps.now();
  if (held.length > 0) {
    await sql`
      INSERT INTO user_sockets (process_id, socket_id, user_id, workspace_id, expires_at)
      SELECT ${processId}, s, u, w, ${liveUntil(at, t)}::timestamptz
      FROM unnest(${held.map((h) => h.socketId)}::text[], ${held.map((h) => h.userId)}::int[], ${held.map((h) => h.workspaceId)}::int[]) AS v(s, u, w)
      ON CONFLICT (process_id, socket_id) DO UPDATE SET expires_at = EXCLUDED.expires_at`.execute(deps.db);
  }
  await deps.db.transaction().execute(async (trx) => {
    const { rows } = await sql<{ id: number }>`
      WITH gone AS (DELETE FROM user_sockets WHERE expires_at <= ${at} RETURNING user_id)
      UPDATE users u SET disconnected_at = ${at}
      WHERE u.id IN (SELECT user_id FROM gone) AND u.disconnected_at IS NULL
        AND NOT EXISTS (SELECT 1 FROM user_sockets s WHERE s.user_id = u.id AND s.expires_at > ${at})
      RETURNING u.id`.execute(trx);
    await disconnected(deps.boss, trx, rows, at, t);
    await setOffline(trx, sql`disconnected_at <= ${new Date(at.getTime() - t.offlineAfterMs)}`, at);
  });
}

/**
 * Sets `offline` the users `where` picks among those disconnected, clears their disconnection,
 * and announces those whose availability changed. Rows are locked in id order: every api
 * process's heartbeat runs this at once.
 */
async function setOffline(trx: Kysely<DB> | Executor, where: ReturnType<typeof sql>, at: Date): Promise<void> {
  const { rows } = await sql<{ id: number; was: string }>`
    UPDATE users u SET availability = 'offline', disconnected_at = NULL
    FROM (SELECT id, availability FROM users WHERE disconnected_at IS NOT NULL AND ${where} ORDER BY id FOR NO KEY UPDATE) AS before
    WHERE u.id = before.id
    RETURNING u.id, before.availability AS was`.execute(trx);
  await announceUsers(
    trx,
    rows.filter((r) => r.was !== 'offline').map((r) => r.id),
    at,
  );
}

/**
 * `user-offline`: sets offline the users whose disconnection the job is about, if no socket
 * of theirs came back since (that clears `disconnected_at`, so a later disconnection has a
 * job of its own). Idempotent: a repeated job finds nothing to do.
 */
export const userOfflineQueue: QueueDefinition<OfflineJob> = {
  name: USER_OFFLINE_QUEUE,
  options: { retryLimit: 10, retryDelay: 5, retryBackoff: true, retryDelayMax: 300, expireInSeconds: 120, deleteAfterSeconds: 24 * 3600 },
  worker: {
    options: { batchSize: 50, pollingIntervalSeconds: 1 },
    async handle(deps, jobs) {
      await deps.db.transaction().execute(async (trx) => {
        for (const { data } of jobs) {
          await setOffline(trx, sql`id = ${data.userId} AND disconnected_at = ${new Date(data.disconnectedAt)}`, deps.now());
        }
      });
    },
  },
};
