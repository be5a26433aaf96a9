import { randomUUID } from 'node:crypto';
import { WebSocket } from 'ws';
import { findLiveCredentials } from '../auth/sessions.queries.js';
import { PgListener } from '../db/listener.js';
import { noteWorkspaceChange } from '../db/replica.js';
import type { Deps } from '../deps.js';
import { placeKey, type Sights, threadsSeenBy } from '../threads/visibility.js';
import { beatSockets, forgetSockets, OFFLINE_AFTER_MS, type PresenceTimings, recordSocket, type SocketRow } from '../users/presence.js';
import { REALTIME_CHANNEL, type RealtimeEvent, SIGHT_CHANGED, type ThreadPlace } from './publish.js';

/** How often sockets are pinged; one that has not answered the previous ping is dropped. */
export const HEARTBEAT_MS = 30_000;
/** Sockets one user may hold on one api process; the next one is closed with 4008. */
export const MAX_SOCKETS_PER_USER = 20;
/** Close code: the socket's credential ended (logout, refresh, revocation, expiry, deletion). */
export const CLOSE_CREDENTIAL_ENDED = 4001;
/** Close code: the user already holds MAX_SOCKETS_PER_USER sockets on this process. */
export const CLOSE_TOO_MANY_SOCKETS = 4008;
/** Close code (1012, "service restart"): this process may have missed events; reconnect and read again. */
export const CLOSE_CATCH_UP = 1012;
/** setTimeout's ceiling (about 24.8 days); a longer-lived credential re-arms its timer. */
const MAX_TIMER_MS = 2 ** 31 - 1;
/** An event's workspace in its NOTIFY payload (`notifyPayload` writes `workspaceId` as a number). */
const WORKSPACE_OF = /"workspaceId":(\d+)/;

export interface RealtimeClient {
  socket: WebSocket;
  workspaceId: number;
  userId: number;
  /** The JWT session behind the socket; null for a personal-access token. */
  sessionId: string | null;
  /** The personal-access token behind the socket; null for a JWT. */
  patId: number | null;
  /** When the credential stops working (the JWT's `exp`, the token's expiry). */
  expiresAt: Date | null;
}

/**
 * This api process's end of the tenant bus: one dedicated connection LISTENs on the channel
 * every process publishes to, and each event goes to this process's sockets of its
 * workspace (only the target user's when `targetUserId` is set). Any number of api
 * processes can run; each delivers to the sockets it holds.
 *
 * A socket lives no longer than its credential: it is closed at the credential's expiry,
 * on a revocation event, and, for events this process missed (its listener was down, or a
 * row was changed without a NOTIFY), by the liveness check run on every heartbeat and
 * after every (re)connection of the listener.
 */
export class RealtimeHub {
  private readonly clients = new Map<number, Set<RealtimeClient>>();
  private readonly byUser = new Map<number, Set<RealtimeClient>>();
  private readonly listener: PgListener;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly alive = new WeakMap<RealtimeClient, boolean>();
  /** This process in `user_sockets` (users' `connected`, docs/teams.md). */
  private readonly processId = randomUUID();
  private readonly rows = new WeakMap<RealtimeClient, SocketRow>();
  private readonly timings: PresenceTimings;
  private closing = false;
  /** Events received and not yet sent, in the order they arrived. */
  private readonly queued: RealtimeEvent[] = [];
  private draining = false;

  /** `timings` other than the defaults are for tests, which cannot wait minutes. */
  constructor(
    private readonly deps: Deps,
    timings: Partial<PresenceTimings> = {},
  ) {
    this.timings = { heartbeatMs: HEARTBEAT_MS, offlineAfterMs: OFFLINE_AFTER_MS, ...timings };
    this.listener = new PgListener(deps, REALTIME_CHANNEL, 'inbox-realtime', {
      notification: (payload) => this.dispatch(payload),
      // Events published while the listener was down are lost; a revocation among them must
      // not leave its sockets open, and every other socket is closed with 1012 so that its
      // client reconnects and reads what it missed (docs/auth.md, close codes).
      connected: async (first) => {
        await this.closeEnded();
        if (!first) this.closeAll(CLOSE_CATCH_UP, 'events may have been missed: reconnect and read again');
      },
    });
  }

  /** Connects the listener; when the database is away, keeps retrying in the background. */
  async start(): Promise<void> {
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.timings.heartbeatMs);
    this.heartbeatTimer.unref();
    await this.listener.start();
  }

  /**
   * Drops sockets whose peer vanished without a close (a laptop lid, a dead NAT mapping):
   * each beat terminates those that did not answer the previous ping and pings the rest.
   * Then closes the sockets whose credential is no longer live, and keeps the remaining ones
   * alive in `user_sockets`; the promise settles when both have run.
   */
  async heartbeat(): Promise<void> {
    const held: SocketRow[] = [];
    for (const set of this.clients.values()) {
      for (const client of set) {
        if (this.alive.get(client) === false) {
          client.socket.terminate();
          continue;
        }
        this.alive.set(client, false);
        client.socket.ping();
        const row = this.rows.get(client);
        if (row && client.socket.readyState === WebSocket.OPEN) held.push(row);
      }
    }
    const beat = beatSockets(this.deps, this.processId, held, this.timings).catch((err) =>
      this.deps.log.warn({ err }, 'realtime could not keep its sockets alive in the database'),
    );
    await Promise.all([this.closeEnded(), beat]);
  }

  /**
   * Asks Postgres, in one statement, which of the sessions and tokens behind this process's
   * sockets are still live, and closes the sockets of the others. Never throws: a failed
   * check is logged and the next beat tries again.
   */
  async closeEnded(): Promise<void> {
    const held = [...this.byUser.values()].flatMap((set) => [...set]);
    const sessionIds = [...new Set(held.flatMap((c) => (c.sessionId !== null ? [c.sessionId] : [])))];
    const patIds = [...new Set(held.flatMap((c) => (c.patId !== null ? [c.patId] : [])))];
    if (sessionIds.length === 0 && patIds.length === 0) return;
    try {
      const live = await findLiveCredentials(this.deps.db, sessionIds, patIds, this.deps.now());
      for (const client of held) {
        const ended =
          client.sessionId !== null ? !live.sessionIds.has(client.sessionId) : client.patId !== null && !live.patIds.has(client.patId);
        if (ended) client.socket.close(CLOSE_CREDENTIAL_ENDED, 'session ended');
      }
    } catch (err) {
      this.deps.log.warn({ err }, 'realtime could not check the liveness of its sockets’ sessions');
    }
  }

  /**
   * Holds a socket; refuses it (closes it with 4008, returning false) when its user already
   * holds MAX_SOCKETS_PER_USER on this process.
   */
  add(client: RealtimeClient): boolean {
    let mine = this.byUser.get(client.userId);
    if (mine && mine.size >= MAX_SOCKETS_PER_USER) {
      client.socket.close(CLOSE_TOO_MANY_SOCKETS, `at most ${MAX_SOCKETS_PER_USER} sockets per user`);
      return false;
    }
    if (!mine) {
      mine = new Set();
      this.byUser.set(client.userId, mine);
    }
    mine.add(client);
    let set = this.clients.get(client.workspaceId);
    if (!set) {
      set = new Set();
      this.clients.set(client.workspaceId, set);
    }
    set.add(client);
    this.alive.set(client, true);
    const row: SocketRow = { processId: this.processId, socketId: randomUUID(), userId: client.userId, workspaceId: client.workspaceId };
    // The close's delete waits for the open's insert, so a short-lived socket leaves no row.
    // Heartbeats keep the row alive only once it is recorded: a beat's upsert landing first
    // would make the open look like a second socket and its `user.updated` go unsent.
    const recorded = recordSocket(this.deps, row, this.timings)
      .then(() => {
        if (client.socket.readyState === WebSocket.OPEN) this.rows.set(client, row);
      })
      .catch((err) => this.deps.log.warn({ err }, 'realtime could not record a socket in the database'));
    let expiry: NodeJS.Timeout | undefined;
    const armExpiry = () => {
      if (client.expiresAt === null) return;
      const ms = client.expiresAt.getTime() - this.deps.now().getTime();
      if (ms <= 0) {
        client.socket.close(CLOSE_CREDENTIAL_ENDED, 'credential expired');
        return;
      }
      expiry = setTimeout(armExpiry, Math.min(ms, MAX_TIMER_MS));
      expiry.unref();
    };
    armExpiry();
    client.socket.on('pong', () => this.alive.set(client, true));
    client.socket.on('close', () => {
      clearTimeout(expiry);
      set.delete(client);
      if (set.size === 0) this.clients.delete(client.workspaceId);
      mine.delete(client);
      if (mine.size === 0) this.byUser.delete(client.userId);
      // At shutdown, close() forgets every socket of the process at once.
      if (this.closing) return;
      void recorded
        .then(() => forgetSockets(this.deps, this.processId, row, this.timings))
        .catch((err) => this.deps.log.warn({ err }, 'realtime could not forget a closed socket in the database'));
    });
    return true;
  }

  private dispatch(payload: string | undefined): void {
    // Whichever process a client's re-read reaches knows of the change: it waits for the read
    // replica to show it. The workspace is read off the payload, unparsed, as the next line avoids.
    if (this.deps.replica && payload) {
      const workspace = WORKSPACE_OF.exec(payload);
      if (workspace) noteWorkspaceChange(this.deps, Number(workspace[1]));
    }
    // With no socket on this process there is no one to send to or close: every message a
    // worker processes arrives here, so the parse is skipped rather than thrown away.
    if (this.clients.size === 0) return;
    let event: RealtimeEvent;
    try {
      event = JSON.parse(payload ?? '') as RealtimeEvent;
    } catch {
      return;
    }
    this.queued.push(event);
    if (!this.draining) void this.drain();
  }

  /**
   * Sends the queued events in order, a batch at a time: who sees the threads a batch names
   * is asked once for the batch (src/threads/visibility.ts), as things are now, so a change of
   * teams, roles or the setting applies from the next batch on.
   */
  private async drain(): Promise<void> {
    this.draining = true;
    try {
      // The notifications of one read from the listener arrive together: one lookup for them all.
      await new Promise((resolve) => setImmediate(resolve));
      while (this.queued.length > 0) {
        const batch = this.queued.splice(0);
        const seen = await this.threadsSeen(batch);
        for (const event of batch) this.send(event, seen);
      }
    } finally {
      this.draining = false;
    }
  }

  /** Per workspace, which of the batch's threads (and former places) each user holding a socket here sees. */
  private async threadsSeen(batch: RealtimeEvent[]): Promise<Map<number, Sights>> {
    const asked = new Map<number, { ids: Set<number>; places: Map<string, ThreadPlace> }>();
    for (const event of batch) {
      const threadId = threadIdOf(event);
      if (threadId === undefined || !this.clients.has(event.workspaceId)) continue;
      const ask = asked.get(event.workspaceId) ?? { ids: new Set(), places: new Map() };
      asked.set(event.workspaceId, ask);
      ask.ids.add(threadId);
      if (event.formerly) ask.places.set(placeKey(event.formerly), event.formerly);
    }
    const seen = new Map<number, Sights>();
    await Promise.all(
      [...asked].map(async ([workspaceId, { ids, places }]) => {
        const userIds = [...new Set([...(this.clients.get(workspaceId) ?? [])].map((c) => c.userId))];
        try {
          seen.set(workspaceId, await threadsSeenBy(this.deps.db, workspaceId, userIds, [...ids], [...places.values()]));
        } catch (err) {
          // Unknown is unseen: these threads' events are not sent; clients refetch on their next event.
          this.deps.log.warn({ err }, 'realtime could not tell who sees the threads of its events');
          seen.set(workspaceId, { threads: new Map(), places: new Map() });
        }
      }),
    );
    return seen;
  }

  private send(event: RealtimeEvent, seen: Map<number, Sights>): void {
    if (event.type === SIGHT_CHANGED) {
      this.closeSightChanged(event);
      return;
    }
    const revocation = event.type === 'session.revoked' || event.type === 'token.revoked';
    // A revocation too large for NOTIFY arrives without its ids: ask the database instead.
    if (revocation && event.truncated) void this.closeEnded();
    const set = this.clients.get(event.workspaceId);
    if (!set) return;
    // A targeted event says whom it is for (SPEC §4.5: republished "with targetUserId").
    const message = JSON.stringify({
      type: event.type,
      ...(event.targetUserId !== undefined ? { targetUserId: event.targetUserId } : {}),
      data: event.data,
      ...(event.truncated ? { truncated: true } : {}),
    });
    const threadId = threadIdOf(event);
    const sights = seen.get(event.workspaceId);
    const formerly = event.formerly && placeKey(event.formerly);
    let left: string | undefined;
    for (const client of [...set]) {
      if (event.targetUserId !== undefined && client.userId !== event.targetUserId) continue;
      if (threadId !== undefined) {
        const threads = sights?.threads.get(client.userId);
        if (threads !== 'all' && !threads?.has(threadId)) {
          // Moved out of their sight (another team, another assignee): they saw it, so they
          // hear that it changed, by its id alone, and a read of it answers 404 (docs/teams.md).
          if (formerly && sights?.places.get(client.userId)?.has(formerly)) {
            left ??= JSON.stringify({ type: event.type, data: { id: threadId }, truncated: true });
            client.socket.send(left);
          }
          continue;
        }
      }
      client.socket.send(message);
      if (revocation && endsCredential(event, client)) client.socket.close(CLOSE_CREDENTIAL_ENDED, 'session ended');
    }
  }

  /**
   * The users whose sight changed (`data.userIds`; everyone of the workspace when absent) get
   * their sockets closed with 1012: a list they hold may name threads they no longer see, or
   * miss ones they now see, and one re-read after reconnecting is all it takes.
   */
  private closeSightChanged(event: RealtimeEvent): void {
    const ids = Array.isArray(event.data.userIds) ? new Set(event.data.userIds as unknown[]) : undefined;
    for (const client of [...(this.clients.get(event.workspaceId) ?? [])])
      if (!ids || ids.has(client.userId)) client.socket.close(CLOSE_CATCH_UP, 'the threads you may see changed: reconnect and read again');
  }

  /** Closes every socket this process holds with `code`; each one's close handler forgets it. */
  private closeAll(code: number, reason: string): void {
    for (const set of this.clients.values()) for (const c of set) c.socket.close(code, reason);
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    this.closing = true;
    this.closeAll(1001, 'server shutting down');
    await forgetSockets(this.deps, this.processId, null, this.timings).catch((err) =>
      this.deps.log.warn({ err }, 'realtime could not forget its sockets in the database'),
    );
    await this.listener.close();
  }
}

/** Events whose `data` is the Thread itself (`sla.*` carry the thread too, docs/sla.md). */
const THREAD_DATA_PREFIXES = ['thread.', 'sla.'];

/** The thread an event is about: `data.threadId`, or the thread itself for `thread.*` and `sla.*`; undefined for others. */
function threadIdOf(event: RealtimeEvent): number | undefined {
  const { data } = event;
  if (typeof data.threadId === 'number') return data.threadId;
  if (THREAD_DATA_PREFIXES.some((p) => event.type.startsWith(p)) && typeof data.id === 'number') return data.id;
  return undefined;
}

/** A user-wide revocation closes every socket of the user; otherwise those of the named sessions and tokens. */
function endsCredential(event: RealtimeEvent, client: RealtimeClient): boolean {
  if (event.data.userWide === true) return true;
  const sessionIds = Array.isArray(event.data.sessionIds) ? (event.data.sessionIds as unknown[]) : [];
  const patIds = Array.isArray(event.data.patIds) ? (event.data.patIds as unknown[]) : [];
  return (client.sessionId !== null && sessionIds.includes(client.sessionId)) || (client.patId !== null && patIds.includes(client.patId));
}
