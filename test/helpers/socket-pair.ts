import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import WebSocket, { WebSocketServer } from 'ws';

/** A socket pair on loopback for a hub under test: the server end goes into the hub. */
export async function socketPair() {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const accepted = once(server, 'connection');
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`);
  const [serverSide] = (await accepted) as [WebSocket];
  await once(client, 'open');
  const closed = new Promise<number>((resolve) => client.on('close', (code) => resolve(code)));
  return {
    server,
    client,
    serverSide,
    closed,
    done: () => {
      client.terminate();
      server.close();
    },
  };
}
