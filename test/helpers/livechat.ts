import type { FastifyInstance } from 'fastify';
import WebSocket from 'ws';
import { createConnection } from '../../src/connections/connections.service.js';
import type { Deps } from '../../src/deps.js';
import { waitFor } from './webhooks.js';

/** A livechat connection (a widget); its key is generated unless given. */
export async function makeWidget(
  deps: Deps,
  workspaceId: number,
  options: { allowedOrigins?: string[]; key?: string; name?: string } = {},
) {
  const connection = await createConnection(
    deps,
    workspaceId,
    {
      integrationKey: 'livechat',
      externalAccountId: options.key,
      name: options.name ?? 'Website chat',
      allowedOrigins: options.allowedOrigins,
    },
    'operator',
  );
  return { connection, key: connection.externalAccountId };
}

let visitors = 0;

/**
 * A visitor who opened a conversation on `key`: its token, its thread, its auth header. Each
 * comes from an address of its own (TEST-NET-2) unless one is given, so only a test about the
 * per-address limit meets it.
 */
export async function startVisitor(
  app: FastifyInstance,
  key: string,
  body: Record<string, unknown> = {},
  remoteAddress = `198.51.100.${(visitors++ % 254) + 1}`,
) {
  const res = await app.inject({ method: 'POST', url: `/v1/livechat/${key}/conversations`, payload: body, remoteAddress });
  if (res.statusCode !== 201) throw new Error(`conversation not started: ${res.statusCode} ${res.body}`);
  const { visitorToken, threadId } = res.json().data as { visitorToken: string; threadId: number };
  return { token: visitorToken, threadId, headers: { authorization: `Bearer ${visitorToken}` } };
}

export function visitorSays(app: FastifyInstance, key: string, token: string, text: string) {
  return app.inject({
    method: 'POST',
    url: `/v1/livechat/${key}/messages`,
    headers: { authorization: `Bearer ${token}` },
    payload: { text },
  });
}

export interface Frame {
  type: string;
  data: Record<string, unknown>;
}

export interface OpenSocket {
  ws: WebSocket;
  frames: Frame[];
  closed: Promise<number>;
  /** Waits for the first frame matching `match` (by observing the frames, never by sleeping). */
  frame(match: (f: Frame) => boolean, what: string): Promise<Frame>;
}

/** Opens a socket (a visitor's or an agent's) and collects its JSON frames. */
export async function openSocket(url: string, headers: Record<string, string> = {}): Promise<OpenSocket> {
  const ws = new WebSocket(url, { headers });
  const frames: Frame[] = [];
  ws.on('message', (m) => frames.push(JSON.parse(String(m)) as Frame));
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return {
    ws,
    frames,
    closed,
    frame: (match, what) => waitFor(async () => frames.find(match), what),
  };
}

/** The HTTP status a websocket upgrade was refused with (101 when it was accepted). */
export function upgradeStatus(url: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve) => {
    const ws = new WebSocket(url, { headers });
    ws.on('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.on('open', () => {
      ws.close();
      resolve(101);
    });
    ws.on('error', () => {});
  });
}
