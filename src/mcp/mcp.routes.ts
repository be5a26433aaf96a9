import type { FastifyPluginAsync } from 'fastify';
import { Type } from 'typebox';
import { bearerToken, resolveApiKey } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';

/**
 * `/mcp`: the Model Context Protocol over Streamable HTTP (docs/mcp.md), for desktop assistants
 * and agents. An API key (`x-api-key` or `Authorization: Bearer`) names the workspace and the
 * scopes; each request gets a server of its own (stateless: no session to keep between
 * requests, so any api process answers any request). The SDK and its schemas (about 7 MB
 * of heap) load with the first request, not with every process.
 */
export const mcpRoutes: FastifyPluginAsync<{ deps: Deps }> = async (app, { deps }) => {
  // Stateless: no stream to resume (GET) and no session to end (DELETE).
  app.route({
    method: ['GET', 'DELETE'],
    url: '/mcp',
    schema: { hide: true },
    handler: async () => {
      throw errors.clientError(405, 'this MCP server is stateless: POST only');
    },
  });
  app.route({
    method: 'POST',
    url: '/mcp',
    // A JSON-RPC message or a batch of them; the SDK's transport validates what is inside.
    schema: {
      hide: true,
      body: Type.Union([Type.Object({}, { additionalProperties: true }), Type.Array(Type.Unknown())]),
    },
    handler: async (request, reply) => {
      const header = request.headers['x-api-key'];
      const key = (Array.isArray(header) ? header[0] : header) ?? bearerToken(request);
      if (!key) throw errors.unauthorized('send an API key: x-api-key or Authorization: Bearer');
      const auth = await resolveApiKey(deps, key);
      const { answerMcp } = await import('./mcp-server.js');
      await answerMcp(app, auth, key, request, reply);
    },
  });
};
