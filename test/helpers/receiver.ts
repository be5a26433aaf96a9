import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request a receiver got: headers and the body's exact bytes. */
export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  raw: Buffer;
  json: { id: string; type: string; createdAt: string; workspaceId: number; data: Record<string, unknown> };
  at: number;
}

export type ReceiverBehaviour = { status: number; headers?: Record<string, string>; body?: string } | 'hang';
/** How a receiver answers each request: the same way every time, or as a function says (later, when it returns a promise). */
export type ReceiverBehaviours = ReceiverBehaviour | ((r: Received) => ReceiverBehaviour | Promise<ReceiverBehaviour>);

/**
 * A customer's webhook receiver on loopback: records every request with its raw body and
 * answers as told (200 by default, any status, never, or when a promise says). `stop()` then `start()` takes it down
 * and brings it back on the same port.
 */
export interface Receiver {
  url: string;
  port: number;
  received: Received[];
  behave(b: ReceiverBehaviours): void;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(options: { host?: string; port?: number } = {}): Promise<Receiver> {
  const host = options.host ?? '127.0.0.1';
  const received: Received[] = [];
  let behaviour: ReceiverBehaviours = { status: 200 };
  let server: Server | undefined;
  const hanging = new Set<import('node:http').ServerResponse>();

  const listen = (port: number) =>
    new Promise<Server>((resolve, reject) => {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const raw = Buffer.concat(chunks);
          let json: Received['json'];
          try {
            json = JSON.parse(raw.toString('utf8'));
          } catch {
            json = {} as Received['json'];
          }
          const r: Received = { path: req.url ?? '/', headers: req.headers, raw, json, at: Date.now() };
          received.push(r);
          const answer = (b: ReceiverBehaviour) => {
            if (b === 'hang') {
              hanging.add(res);
              return;
            }
            res.writeHead(b.status, { 'content-type': 'text/plain', ...b.headers });
            res.end(b.body ?? '');
          };
          const b = typeof behaviour === 'function' ? behaviour(r) : behaviour;
          if (!(b instanceof Promise)) return answer(b);
          // Held until the promise settles; a stop meanwhile drops it like a hanging one.
          hanging.add(res);
          void b.then((later) => {
            if (!hanging.delete(res)) return;
            answer(later);
          });
        });
      });
      s.keepAliveTimeout = 1000;
      s.once('error', reject);
      s.listen(port, host, () => resolve(s));
    });

  server = await listen(options.port ?? 0);
  const port = (server.address() as AddressInfo).port;
  const stop = async () => {
    if (!server) return;
    const s = server;
    server = undefined;
    for (const res of hanging) res.destroy();
    hanging.clear();
    s.closeAllConnections();
    await new Promise<void>((r) => s.close(() => r()));
  };
  return {
    url: `http://${host}:${port}`,
    port,
    received,
    behave(b) {
      behaviour = b;
    },
    stop,
    async start() {
      server = await listen(port);
    },
    close: stop,
  };
}
