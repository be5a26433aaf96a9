// The hardening part's peers on 127.0.0.1: a webhook receiver that hangs or answers, and a TCP
// listener that only counts who connects to it (and greets with a banner a scan would want).
import { createServer as createHttpServer, type ServerResponse } from 'node:http';
import { type AddressInfo, createServer as createTcpServer, type Socket } from 'node:net';

/** A customer's receiver: `hang` keeps every request open (past the 10 s deadline), `ok` answers 204. */
export async function startWebhookReceiver(mode: 'hang' | 'ok') {
  /** When each delivery id first arrived, and on which path. */
  const received = new Map<string, { at: number; path: string }>();
  /** Requests held open, by the path (the endpoint) they came to. */
  const open = new Map<ServerResponse, string>();
  const openPaths = () => new Set(open.values()).size;
  let requests = 0;
  let maxOpen = 0;
  let maxPaths = 0;
  const server = createHttpServer((req, res) => {
    req.resume().on('end', () => {
      requests++;
      const id = String(req.headers['x-service-delivery'] ?? '');
      if (!received.has(id)) received.set(id, { at: Date.now(), path: req.url ?? '' });
      if (mode === 'ok') {
        res.writeHead(204).end();
        return;
      }
      open.set(res, req.url ?? '');
      maxOpen = Math.max(maxOpen, open.size);
      maxPaths = Math.max(maxPaths, openPaths());
      res.on('close', () => open.delete(res));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received,
    requests: () => requests,
    /** Requests held open right now, and at most so far; the endpoints (paths) they came to. */
    hanging: () => open.size,
    maxHanging: () => maxOpen,
    hangingEndpoints: openPaths,
    maxHangingEndpoints: () => maxPaths,
    close: () =>
      new Promise<void>((r) => {
        for (const res of open.keys()) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** What a port scan through `smtpUrl` would want to read back. */
export const BANNER = 'redis_version:7.2.4 role:master connected_clients:3';

/** A non-SMTP service on loopback that counts the connections it accepts. */
export async function startCountingListener() {
  let accepted = 0;
  const sockets = new Set<Socket>();
  const server = createTcpServer((s) => {
    accepted++;
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
    s.on('error', () => {});
    s.write(`-ERR ${BANNER}\r\n`);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  return {
    port: (server.address() as AddressInfo).port,
    accepted: () => accepted,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sockets) s.destroy();
        server.close(() => r());
      }),
  };
}
