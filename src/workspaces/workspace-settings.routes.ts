import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { trailOf } from '../audit/audit.js';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { Envelope } from '../http/schemas.js';
import {
  changeWorkspaceSettings,
  WorkspaceSettingsPatch,
  WorkspaceSettingsResource,
  workspaceSettingsResource,
} from './workspace-settings.js';

/**
 * `/v1/workspace`: the caller's workspace and its settings (docs/teams.md). Anyone of the
 * workspace (and `read` keys) reads them; admins change them.
 */
export const workspaceSettingsRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.get(
    '/workspace',
    {
      preValidation: requireAuth(deps),
      schema: { summary: "The workspace's name and settings", response: { 200: Envelope(WorkspaceSettingsResource) } },
    },
    async (request) => envelope(request, await workspaceSettingsResource(deps.db, tenantOf(request).workspaceId)),
  );

  app.patch(
    '/workspace',
    {
      preValidation: requireAuth(deps, { scope: 'admin' }),
      schema: {
        summary: "Change the workspace's name or settings",
        body: WorkspaceSettingsPatch,
        response: { 200: Envelope(WorkspaceSettingsResource) },
      },
    },
    async (request) =>
      envelope(request, await changeWorkspaceSettings(deps, tenantOf(request).workspaceId, request.body, trailOf(request))),
  );
};
