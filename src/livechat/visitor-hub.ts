import type { WebSocket } from 'ws';
import { PgListener } from '../db/listener.js';
import type { Deps } from '../deps.js';
import { announce } from '../messaging/announce.js';
import { HEARTBEAT_MS } from '../realtime/hub.js';
import { findVisitorById, findVisitorMessage, markDelivered, type Visitor } from './livechat.queries.js';
import { publishToThreadVisitors, VISITOR_CHANNEL, type VisitorBlocked, type VisitorEvent } from './visitor-events.js';
import { visitorMessages } from './visitor-message.js';

/** Sockets one visitor may hold on one api process (tabs); the next is closed with 4008. */
export const MAX_SOCKETS_PER_VISITOR = 10;
/** Close code: the visitor token expired. */
export const CLOSE_TOKEN_EXPIRED = 4001;
/** Close code: an agent blocked the visitor; its token no longer works. */
export const CLOSE_VISITOR_BLOCKED = 4003;
/** Close code: the visitor already holds MAX_SOCKETS_PER_VISITOR sockets on this process. */
export const CLOSE_TOO_MANY_SOCKETS = 4008;
/** Close code (1012, "service restart"): events may have been missed; reconnect and read the thread. */
export const CLOSE_CATCH_UP = 1012;

export interface VisitorClient {
  socket: WebSocket;
  visitor: Pick<Visitor, 'id' | 'handle' | 'contact_id' | 'connection_id' | 'expires_at'>;
}

/**
 * This api process's end of the live chat visitor bus. The sender announces each reply on
 * VISITOR_CHANNEL; every api process hears it, and the one(s) holding a socket of that
 * visitor read the message, write it to the socket(s) and, once a socket took it, mark it
 * `delivered` and announce that (to agents on the tenant bus, to the visitor's other sockets
 * here). A process holding no socket of the visitor does nothing, so the reply stays `sent`
 * and the widget finds it when it reconnects and reads the thread.
 *
 * Events are handled one at a time, in the order they arrive, so a visitor's frames keep the
 * order of their events. A listener that was down may have missed some: its sockets are then
 * closed with 1012, and widgets reconnect and read the thread again.
 */
export class VisitorHub {
  private readonly byVisitor = new Map<string, Set<VisitorClient>>();
  private readonly alive = new WeakMap<VisitorClient, boolean>();
  private readonly listener: PgListener;
  private heartbeatTimer: NodeJS.Timeout | undefined;
  private queue: Promise<void> = Promise.resolve();

  constructor(private readonly deps: Deps) {
    this.listener = new PgListener(deps, VISITOR_CHANNEL, 'inbox-livechat', {
      notification: (payload) => this.receive(payload),
      connected: (first) => {
        if (!first) this.closeAll(CLOSE_CATCH_UP, 'reconnect and read the thread');
      },
    });
  }

  async start(): Promise<void> {
    this.heartbeatTimer = setInterval(() => this.heartbeat(), HEARTBEAT_MS);
    this.heartbeatTimer.unref();
    await this.listener.start();
  }

  /** Holds a socket; refuses it (closed with 4008, false) when its visitor holds too many here. */
  add(client: VisitorClient): boolean {
    let mine = this.byVisitor.get(client.visitor.handle);
    if (mine && mine.size >= MAX_SOCKETS_PER_VISITOR) {
      client.socket.close(CLOSE_TOO_MANY_SOCKETS, `at most ${MAX_SOCKETS_PER_VISITOR} sockets per visitor`);
      return false;
    }
    if (!mine) {
      mine = new Set();
      this.byVisitor.set(client.visitor.handle, mine);
    }
    mine.add(client);
    this.alive.set(client, true);
    client.socket.on('pong', () => this.alive.set(client, true));
    client.socket.on('close', () => {
      mine.delete(client);
      if (mine.size === 0 && this.byVisitor.get(client.visitor.handle) === mine) this.byVisitor.delete(client.visitor.handle);
    });
    return true;
  }

  /**
   * Terminates sockets that did not answer the previous ping (a vanished phone, a dead NAT
   * mapping), pings the others, and closes those whose token has expired.
   */
  heartbeat(): void {
    const now = this.deps.now();
    for (const set of this.byVisitor.values()) {
      for (const client of set) {
        if (client.visitor.expires_at <= now) client.socket.close(CLOSE_TOKEN_EXPIRED, 'visitor token expired');
        else if (this.alive.get(client) === false) client.socket.terminate();
        else {
          this.alive.set(client, false);
          client.socket.ping();
        }
      }
    }
  }

  private receive(payload: string | undefined): void {
    let event: VisitorEvent | VisitorBlocked;
    try {
      event = JSON.parse(payload ?? '') as VisitorEvent | VisitorBlocked;
    } catch {
      return;
    }
    if (event.type === 'visitor.blocked') {
      for (const c of this.byVisitor.get(event.visitor) ?? []) c.socket.close(CLOSE_VISITOR_BLOCKED, 'visitor blocked');
      return;
    }
    if (typeof event.visitor !== 'string' || typeof event.messageId !== 'number' || !this.byVisitor.has(event.visitor)) return;
    this.queue = this.queue.then(() =>
      this.deliver(event).catch((err) =>
        this.deps.log.warn({ err, messageId: event.messageId }, 'live chat could not hand a message to its visitor'),
      ),
    );
  }

  private async deliver(event: VisitorEvent): Promise<void> {
    const held = [...(this.byVisitor.get(event.visitor) ?? [])];
    if (held.length === 0) return;
    // The visitor's contact as it is now, not as it was when the socket opened: a merge may
    // have made it another contact's since.
    const visitor = await findVisitorById(this.deps.db, held[0]!.visitor.id);
    if (!visitor) return;
    const message = await findVisitorMessage(this.deps.db, visitor, event.messageId);
    if (!message) return;
    const [view] = await visitorMessages(this.deps, [message]);
    const frame = JSON.stringify({ type: event.type, data: view });
    const taken = await Promise.all(held.map((c) => sendFrame(c.socket, frame)));
    if (event.type !== 'message.created' || message.direction !== 'outbound' || !taken.includes(true)) return;
    // A socket took the reply: it is delivered. Only the process whose update changed the row
    // announces it, however many held a socket of the visitor.
    await this.deps.db.transaction().execute(async (trx) => {
      const row = await markDelivered(trx, message.id, this.deps.now());
      if (!row) return;
      await announce(this.deps, trx, [{ type: 'message.updated', message: row }], this.deps.now());
      await publishToThreadVisitors(trx, 'message.updated', row.id, event.visitor);
    });
  }

  private closeAll(code: number, reason: string): void {
    for (const set of this.byVisitor.values()) for (const c of set) c.socket.close(code, reason);
  }

  async close(): Promise<void> {
    clearInterval(this.heartbeatTimer);
    this.closeAll(1001, 'server shutting down');
    await this.listener.close();
    await this.queue;
  }
}

/** Writes a frame; true once it was handed to the network, false when the socket could not take it. */
function sendFrame(socket: WebSocket, frame: string): Promise<boolean> {
  if (socket.readyState !== socket.OPEN) return Promise.resolve(false);
  return new Promise((resolve) => socket.send(frame, (err) => resolve(!err)));
}
