import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { RealtimeHub } from '../../src/realtime/hub.js';
import { useTestContext } from '../helpers/app.js';

const ctx = await useTestContext();

/** A real socket pair on loopback: the server end goes into the hub, the client end is returned. */
async function pair(autoPong: boolean) {
  const server = new WebSocketServer({ port: 0, host: '127.0.0.1' });
  await once(server, 'listening');
  const accepted = once(server, 'connection');
  const client = new WebSocket(`ws://127.0.0.1:${(server.address() as AddressInfo).port}`, { autoPong });
  const [serverSide] = (await accepted) as [WebSocket];
  await once(client, 'open');
  return { server, client, serverSide };
}

describe('realtime heartbeat', () => {
  it('drops a socket that stops answering pings and keeps one that answers', async () => {
    const hub = new RealtimeHub(ctx.deps);
    const silent = await pair(false);
    const lively = await pair(true);
    hub.add({ socket: silent.serverSide, workspaceId: 1, userId: 1, sessionId: null, patId: null, expiresAt: null });
    hub.add({ socket: lively.serverSide, workspaceId: 1, userId: 2, sessionId: null, patId: null, expiresAt: null });
    const silentClosed = once(silent.serverSide, 'close');
    void hub.heartbeat(); // pings both
    await once(lively.serverSide, 'pong');
    void hub.heartbeat(); // the silent one never answered: terminated; the lively one is pinged again
    await silentClosed;
    expect(silent.serverSide.readyState).toBe(WebSocket.CLOSED);
    expect(lively.serverSide.readyState).toBe(WebSocket.OPEN);
    await hub.close();
    for (const p of [silent, lively]) {
      p.client.terminate();
      p.server.close();
    }
  });
});
