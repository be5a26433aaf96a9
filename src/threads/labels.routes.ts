import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { Envelope } from '../http/schemas.js';
import { listLabels } from './labels.queries.js';

export const LabelResource = Type.Object(
  {
    name: Type.String(),
    openThreads: Type.Integer({ minimum: 0, description: 'open threads carrying the label' }),
  },
  { title: 'Label' },
);

/** `GET /v1/labels`: labels exist only on threads; the list is read from the rows kept beside them. */
export const labelsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preValidation', requireAuth(deps));

  app.get(
    '/labels',
    {
      schema: {
        summary: 'List every label used on the workspace’s threads, with its open threads',
        response: { 200: Envelope(Type.Array(LabelResource)) },
      },
    },
    async (request) => {
      const rows = await listLabels(deps.db, tenantOf(request));
      return envelope(
        request,
        rows.map((r) => ({ name: r.name, openThreads: r.open_threads })),
      );
    },
  );
};
