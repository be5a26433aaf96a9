import type { FastifyPluginAsync } from 'fastify';
import { bearerToken, personOf, resolveToken } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import type { PresenceTimings } from '../users/presence.js';
import { RealtimeHub } from './hub.js';

/**
 * `GET /v1/realtime`: the tenant bus over a websocket. Authenticated by a JWT or a
 * personal-access token, as `Authorization: Bearer …` or, for browsers (which cannot set
 * headers on a websocket), `?token=…`.
 */
export const realtimeRoutes: FastifyPluginAsync<{ deps: Deps; presence?: Partial<PresenceTimings> }> = async (app, { deps, presence }) => {
  const hub = new RealtimeHub(deps, presence);
  app.addHook('onReady', () => hub.start());
  app.addHook('onClose', () => hub.close());

  app.route({
    method: 'GET',
    url: '/realtime',
    // A plain GET (no upgrade) gets 426 in the error envelope, not the plugin's bare 404.
    handler: async () => {
      throw errors.upgradeRequired();
    },
    schema: { hide: true },
    preValidation: async (request) => {
      const query = request.query as { token?: string };
      const token = bearerToken(request) ?? (typeof query.token === 'string' && query.token !== '' ? query.token : undefined);
      if (!token) throw errors.unauthorized('a bearer token or ?token= is required');
      const auth = await resolveToken(deps, request, token);
      if (!auth) throw errors.unauthorized('invalid or expired token');
      request.auth = auth;
    },
    wsHandler: (socket, request) => {
      const auth = personOf(request);
      const held = hub.add({
        socket,
        workspaceId: auth.workspaceId,
        userId: auth.userId,
        sessionId: auth.kind === 'user' ? auth.sessionId : null,
        patId: auth.kind === 'pat' ? auth.patId : null,
        expiresAt: auth.expiresAt,
      });
      if (!held) return; // over the per-user cap: already closed with 4008
      socket.send(JSON.stringify({ type: 'ready', data: { userId: auth.userId, workspaceId: auth.workspaceId } }));
    },
  });
};
