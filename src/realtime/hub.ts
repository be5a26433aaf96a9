import pg from 'pg';
import type { WebSocket } from 'ws';
import type { Deps } from '../deps.js';
import { REALTIME_CHANNEL, type RealtimeEvent } from './publish.js';

/** How often sockets are pinged; one that has not answered the previous ping is dropped. */
export const HEARTBEAT_MS = 30_000;

export interface RealtimeClient {
  socket: WebSocket;
  workspaceId: number;
  userId: number;
  /** The JWT session behind the socket; null for a personal-access token. */
  sessionId: string | null;
}

/**
 * This api process's end of the tenant bus: one dedicated connection LISTENs on the channel
 * every process publishes to, and each event goes to this process's sockets of its
 * workspace (only the target user's when `targetUserId` is set). Any number of api
 * processes can run; each delivers to the sockets it holds.
 */
export class RealtimeHub {
  private readonly clients = new Map<number, Set<RealtimeClient>>();
  private listener: pg.Client | undefined;
  private closed = false;
  private retryMs = 250;
  private timer: NodeJS.Timeout | undefined;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private readonly alive = new WeakMap<RealtimeClient, boolean>();

  constructor(private readonly deps: Deps) {}

  /** Connects the listener; when the database is away, keeps retrying in the background. */
  async start(): Promise<void> {
    this.heartbeatTimer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
    this.heartbeatTimer.unref();
    await this.tryConnect();
  }

  /**
   * Drops sockets whose peer vanished without a close (a laptop lid, a dead NAT mapping):
   * each beat terminates those that did not answer the previous ping and pings the rest.
   */
  heartbeat(): void {
    for (const set of this.clients.values()) {
      for (const client of set) {
        if (this.alive.get(client) === false) {
          client.socket.terminate();
          continue;
        }
        this.alive.set(client, false);
        client.socket.ping();
      }
    }
  }

  private async tryConnect(): Promise<void> {
    if (this.closed) return;
    try {
      await this.connect();
    } catch (err) {
      this.deps.log.warn({ err }, 'realtime listener could not connect; retrying');
      this.schedule();
    }
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.deps.pool.options.connectionString, application_name: 'inbox-realtime' });
    client.on('notification', (msg) => this.dispatch(msg.payload));
    client.on('error', (err) => {
      this.deps.log.warn({ err }, 'realtime listener lost its connection');
      this.lost(client);
    });
    client.on('end', () => this.lost(client));
    try {
      await client.connect();
      await client.query(`LISTEN ${REALTIME_CHANNEL}`);
    } catch (err) {
      await client.end().catch(() => {});
      throw err;
    }
    if (this.closed) {
      await client.end().catch(() => {});
      return;
    }
    this.listener = client;
    this.retryMs = 250;
  }

  private lost(client: pg.Client): void {
    if (this.listener !== client) return;
    this.listener = undefined;
    client.end().catch(() => {});
    this.schedule();
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.tryConnect(), this.retryMs);
    this.retryMs = Math.min(this.retryMs * 2, 10_000);
  }

  add(client: RealtimeClient): void {
    let set = this.clients.get(client.workspaceId);
    if (!set) this.clients.set(client.workspaceId, (set = new Set()));
    set.add(client);
    this.alive.set(client, true);
    client.socket.on('pong', () => this.alive.set(client, true));
    client.socket.on('close', () => {
      set.delete(client);
      if (set.size === 0) this.clients.delete(client.workspaceId);
    });
  }

  private dispatch(payload: string | undefined): void {
    let event: RealtimeEvent;
    try {
      event = JSON.parse(payload ?? '') as RealtimeEvent;
    } catch {
      return;
    }
    const set = this.clients.get(event.workspaceId);
    if (!set) return;
    const message = JSON.stringify({ type: event.type, data: event.data });
    for (const client of [...set]) {
      if (event.targetUserId !== undefined && client.userId !== event.targetUserId) continue;
      client.socket.send(message);
      if (event.type === 'session.revoked' && endsSession(event, client)) client.socket.close(4001, 'session ended');
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearInterval(this.heartbeatTimer);
    for (const set of this.clients.values()) for (const c of set) c.socket.close(1001, 'server shutting down');
    await this.listener?.end().catch(() => {});
  }
}

/** A revocation naming sessions closes their sockets; one naming none ends every session of the user. */
function endsSession(event: RealtimeEvent, client: RealtimeClient): boolean {
  const ids = event.data.sessionIds;
  if (Array.isArray(ids) && ids.length > 0) return client.sessionId !== null && ids.includes(client.sessionId);
  return client.sessionId !== null;
}
