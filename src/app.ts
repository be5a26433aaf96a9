import fastifyJwt from '@fastify/jwt';
import fastifyWebsocket from '@fastify/websocket';
import type { FastifyInstance } from 'fastify';
import { accountsRoutes } from './accounts/accounts.routes.js';
import { aiRoutes } from './ai/ai.routes.js';
import { apiKeysRoutes } from './api-keys/api-keys.routes.js';
import { attachmentsRoutes } from './attachments/attachments.routes.js';
import { auditRoutes } from './audit/audit.routes.js';
import { accountLinksRoutes } from './auth/account-links.routes.js';
import { passwordRoutes } from './auth/password.routes.js';
import { personalAccessTokensRoutes } from './auth/personal-access-tokens.routes.js';
import { ssoRoutes } from './auth/sso.routes.js';
import { twoFactorRoutes } from './auth/two-factor.routes.js';
import { userRoutes } from './auth/user.routes.js';
import { automationRulesRoutes } from './automation/automation-rules.routes.js';
import { macrosRoutes } from './automation/macros.routes.js';
import { cannedResponsesRoutes } from './canned-responses/canned-responses.routes.js';
import { connectionsRoutes } from './connections/connections.routes.js';
import { telegramWebhookRoutes } from './connections/telegram-webhook.routes.js';
import { templatesRoutes } from './connections/templates.routes.js';
import { contactsRoutes } from './contacts/contacts.routes.js';
import { csatPublicRoutes, csatResponsesRoutes } from './csat/csat.routes.js';
import type { Deps } from './deps.js';
import { exportsRoutes } from './exports/exports.routes.js';
import { healthRoutes } from './health/health.routes.js';
import { consoleRoutes } from './http/console.routes.js';
import { registerOpenApi } from './http/openapi.js';
import { httpServer } from './http/server.js';
import { blockVisitorRoutes } from './livechat/block-visitor.routes.js';
import { livechatRoutes } from './livechat/livechat.routes.js';
import { widgetRoutes } from './livechat/widget.routes.js';
import { mcpRoutes } from './mcp/mcp.routes.js';
import { notificationsRoutes } from './notifications/notifications.routes.js';
import { operatorRoutes } from './operator/operator.routes.js';
import { realtimeRoutes } from './realtime/realtime.routes.js';
import { conversationsRoutes } from './replies/conversations.routes.js';
import { repliesRoutes } from './replies/replies.routes.js';
import { reportsRoutes } from './reports/reports.routes.js';
import { slaPoliciesRoutes } from './sla/sla-policies.routes.js';
import { teamsRoutes } from './teams/teams.routes.js';
import { emailFrameRoutes } from './threads/email-frame.routes.js';
import { labelsRoutes } from './threads/labels.routes.js';
import { searchRoutes } from './threads/search.routes.js';
import { threadWorkflowRoutes } from './threads/thread-workflow.routes.js';
import { threadsRoutes } from './threads/threads.routes.js';
import { viewingRoutes } from './threads/viewing.routes.js';
import type { PresenceTimings } from './users/presence.js';
import { usersRoutes } from './users/users.routes.js';
import { deadLetterRoutes } from './webhooks-in/dead-letter.routes.js';
import { InboxWriter } from './webhooks-in/inbox-writer.js';
import { operatorInboxRoutes } from './webhooks-in/operator-inbox.routes.js';
import { webhooksRoutes } from './webhooks-in/webhooks.routes.js';
import { endpointsRoutes } from './webhooks-out/endpoints.routes.js';
import { eventsRoutes } from './webhooks-out/events.routes.js';
import { engageRoutes } from './workspaces/engage.routes.js';
import { workspaceSettingsRoutes } from './workspaces/workspace-settings.routes.js';

export interface AppOptions {
  /** The ingestion writer (tests pass one to watch it); one is made from deps otherwise. */
  inboxWriter?: InboxWriter;
  /** Where the built agent console is (default dist/console, as `npm run build` writes it). */
  consoleDir?: string;
  /** The realtime heartbeat and the delay before `offline`: tests shorten them, nothing else sets them. */
  presence?: Partial<PresenceTimings>;
  /** Why the process is not ready besides its database and queue (role `all`: its worker process is down). */
  notReady?: () => string | undefined;
}

/**
 * Builds the HTTP app on already-created infrastructure. No listening, no process hooks:
 * the process entry (main.ts) and the tests own those.
 */
export async function buildApp(deps: Deps, options: AppOptions = {}): Promise<FastifyInstance> {
  const app = httpServer(deps);

  // HS256 only: a token naming any other algorithm (or none) is refused.
  await app.register(fastifyJwt, { secret: deps.jwtSecret, sign: { algorithm: 'HS256' }, verify: { algorithms: ['HS256'] } });
  await app.register(fastifyWebsocket, {
    options: { maxPayload: 64 * 1024 },
    // The plugin's own preClose closes every socket with no code (the peer reads 1005) before
    // the hubs' onClose hooks run: say 1001, going away, so clients know to reconnect. New
    // upgrades are refused (503) once the server is closing.
    preClose(done) {
      for (const client of this.websocketServer.clients) client.close(1001, 'server shutting down');
      this.websocketServer.close();
      done();
    },
  });

  await registerOpenApi(app, deps.config.publicUrl);
  await app.register(healthRoutes, { deps, ...(options.notReady ? { notReady: options.notReady } : {}) });
  await app.register(userRoutes, { deps, prefix: '/api/user' });
  await app.register(ssoRoutes, { deps, prefix: '/auth/sso' });
  await app.register(accountLinksRoutes, { deps, prefix: '/api/user' });
  await app.register(personalAccessTokensRoutes, { deps, prefix: '/v1/personal-access-tokens' });
  await app.register(accountsRoutes, { deps, prefix: '/v1/accounts' });
  await app.register(realtimeRoutes, { deps, prefix: '/v1', ...(options.presence ? { presence: options.presence } : {}) });
  await app.register(engageRoutes, { deps, prefix: '/v1/engage' });
  await app.register(apiKeysRoutes, { deps, prefix: '/v1/api-keys' });
  await app.register(connectionsRoutes, { deps, prefix: '/v1/connections' });
  await app.register(templatesRoutes, { deps, prefix: '/v1/connections' });
  await app.register(telegramWebhookRoutes, { deps, prefix: '/v1/connections' });
  await app.register(operatorRoutes, { deps, prefix: '/v1/operator' });
  await app.register(operatorInboxRoutes, { deps, prefix: '/v1/operator' });
  await app.register(deadLetterRoutes, { deps, prefix: '/v1/admin' });
  await app.register(threadsRoutes, { deps, prefix: '/v1' });
  await app.register(searchRoutes, { deps, prefix: '/v1' });
  await app.register(labelsRoutes, { deps, prefix: '/v1' });
  await app.register(repliesRoutes, { deps, prefix: '/v1' });
  await app.register(emailFrameRoutes, { deps, prefix: '/v1' });
  await app.register(conversationsRoutes, { deps, prefix: '/v1' });
  await app.register(attachmentsRoutes, { deps, prefix: '/v1' });
  await app.register(blockVisitorRoutes, { deps, prefix: '/v1' });
  await app.register(usersRoutes, { deps, prefix: '/v1/users' });
  await app.register(passwordRoutes, { deps, prefix: '/v1/users' });
  await app.register(twoFactorRoutes, { deps, prefix: '/v1/users' });
  await app.register(teamsRoutes, { deps, prefix: '/v1/teams' });
  await app.register(slaPoliciesRoutes, { deps, prefix: '/v1/sla-policies' });
  await app.register(reportsRoutes, { deps, prefix: '/v1/reports' });
  await app.register(csatResponsesRoutes, { deps, prefix: '/v1' });
  await app.register(csatPublicRoutes, { deps, prefix: '/csat' });
  await app.register(automationRulesRoutes, { deps, prefix: '/v1/automation-rules' });
  await app.register(macrosRoutes, { deps, prefix: '/v1' });
  await app.register(notificationsRoutes, { deps, prefix: '/v1/notifications' });
  await app.register(viewingRoutes, { deps, prefix: '/v1' });
  await app.register(workspaceSettingsRoutes, { deps, prefix: '/v1' });
  await app.register(auditRoutes, { deps, prefix: '/v1' });
  await app.register(contactsRoutes, { deps, prefix: '/v1/contacts' });
  await app.register(exportsRoutes, { deps, prefix: '/v1' });
  await app.register(cannedResponsesRoutes, { deps, prefix: '/v1/canned-responses' });
  await app.register(threadWorkflowRoutes, { deps, prefix: '/v1' });
  await app.register(endpointsRoutes, { deps, prefix: '/v1/webhook-endpoints' });
  await app.register(eventsRoutes, { deps, prefix: '/v1' });
  await app.register(aiRoutes, { deps, prefix: '/v1' });
  await app.register(mcpRoutes, { deps });
  await app.register(livechatRoutes, { deps, prefix: '/v1/livechat' });
  await app.register(widgetRoutes, { deps, prefix: '/livechat' });
  await app.register(consoleRoutes, { prefix: '/app', ...(options.consoleDir ? { dir: options.consoleDir } : {}) });
  await app.register(webhooksRoutes, { deps, writer: options.inboxWriter ?? new InboxWriter(deps), prefix: '/webhooks' });

  return app;
}
