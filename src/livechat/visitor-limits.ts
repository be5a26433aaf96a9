import type { FastifyRequest } from 'fastify';
import type { WebSocket } from 'ws';
import { clientAddressKey } from '../http/client-address.js';
import { errors } from '../http/errors.js';
import type { Metrics } from '../metrics.js';
import type { Widget } from './livechat.queries.js';

/** Close code: a limit on visitor sockets was reached (the same code as the per-visitor one). */
export const CLOSE_SOCKET_LIMIT = 4008;

/**
 * How many visitor sockets this api process holds, per client address and in all. A socket
 * over either limit is closed at once with CLOSE_SOCKET_LIMIT; the count follows each socket
 * until it closes. The limits are per process: with N api processes one address may hold up
 * to N times its limit, and each process stays within its own budget of descriptors and memory.
 */
export class VisitorSocketLimits {
  private readonly byAddress = new Map<string, number>();
  private total = 0;

  constructor(
    private readonly limits: { perAddress: number; perProcess: number },
    private readonly metrics: Pick<Metrics, 'livechatSockets' | 'livechatSocketsRefused'>,
  ) {}

  /** Counts `socket` for `ip` and returns true, or closes it (4008) and returns false. */
  admit(socket: WebSocket, ip: string): boolean {
    const key = clientAddressKey(ip);
    const held = this.byAddress.get(key) ?? 0;
    const refused =
      this.total >= this.limits.perProcess
        ? `at most ${this.limits.perProcess} visitor sockets on this server`
        : held >= this.limits.perAddress
          ? `at most ${this.limits.perAddress} visitor sockets per client address`
          : undefined;
    if (refused) {
      this.metrics.livechatSocketsRefused.inc({ limit: this.total >= this.limits.perProcess ? 'process' : 'address' });
      socket.close(CLOSE_SOCKET_LIMIT, refused);
      return false;
    }
    this.byAddress.set(key, held + 1);
    this.total++;
    this.metrics.livechatSockets.inc();
    socket.once('close', () => {
      const left = (this.byAddress.get(key) ?? 1) - 1;
      if (left === 0) this.byAddress.delete(key);
      else this.byAddress.set(key, left);
      this.total--;
      this.metrics.livechatSockets.dec();
    });
    return true;
  }
}

/**
 * onRequest of the visitor socket: a widget that lists `allowedOrigins` takes sockets only
 * from pages of those origins. Browsers always send `Origin` on a websocket, so a socket
 * without one is a script outside any browser, refused (403) before the upgrade. The origin
 * itself, when present, was already checked by the visitor routes' first hook.
 */
export async function requireSocketOrigin(request: FastifyRequest): Promise<void> {
  const widget = request.widget as Widget | null;
  if (widget && widget.allowed_origins.length > 0 && request.headers.origin === undefined) {
    throw errors.forbidden('this widget takes sockets only from its allowedOrigins: Origin is required');
  }
}
