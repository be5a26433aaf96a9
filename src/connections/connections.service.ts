import { type Static, type TOptional, type TSchema, Type } from 'typebox';
import { changesOf, recordAudit, systemTrail, type Trail } from '../audit/audit.js';
import { isEmailIntegration } from '../channels/email-inbound.js';
import { INTEGRATION_KEYS, type IntegrationConfig, type IntegrationKey } from '../config.js';
import type { ManagedBy, PreChatForm } from '../db/types.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { Nullable, StringEnum, Timestamp } from '../http/schemas.js';
import { endWidgetVisitorTokens } from '../livechat/block-visitor.queries.js';
import { publishVisitorEvents } from '../livechat/visitor-events.js';
import { requireTeamOf } from '../teams/teams.service.js';
import { routeWaiting } from '../threads/routing.js';
import { requireWorkspace } from '../workspaces/workspaces.service.js';
import { AllowedOrigins, checkAllowedOrigins, newWidgetKey, WIDGET_KEY } from './allowed-origins.js';
import { ConnectionCredentials, checkCredentials, deploymentFallback, sealCredentials } from './connection-credentials.js';
import { type ConnectionRow, findConnection, insertConnection, markConnectionDeleted, updateConnection } from './connections.queries.js';
import { CsatSetting, CsatSettingInput, checkCsatSetting } from './csat-settings.js';
import {
  checkLivechatSettings,
  LivechatColour,
  LivechatGreeting,
  LivechatSettingsFields,
  LivechatTitle,
  PreChatFormSchema,
} from './livechat-settings.js';
import { forgetTemplates } from './templates.queries.js';
import {
  checkWebhookSecrets,
  META_KEYS,
  newConnectionKey,
  newVerifyToken,
  sealWebhookSecrets,
  WebhookSecrets,
  webhookUrl,
} from './webhook-secrets.js';

export const ConnectionName = Type.String({ minLength: 1, maxLength: 200 });
export const BusinessAccountId = Type.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[0-9]+$',
  description: 'WhatsApp Cloud: the WhatsApp Business Account (WABA) id whose message templates the connection sends',
});
export const ConnectionTeamId = Type.Integer({
  minimum: 1,
  maximum: 2_147_483_647,
  description: 'a team of the workspace: new threads on the connection start in it (docs/teams.md)',
});
export const ImapFolder = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'email.imap: the folder read (default INBOX)',
});
/** Connection setting `awayMessage` (docs/sla.md), on create and `PATCH`. */
export const AwayMessage = Nullable(
  Type.String({ minLength: 1, maxLength: 4096, description: 'sent outside business hours (docs/sla.md); null turns it off' }),
);
export const AutoAssign = Type.Boolean({ description: 'assign new and reopened threads automatically (docs/conversations.md)' });

/** The last template sync (docs/replies.md, "Templates"); null before the first. */
export const TemplatesSync = Type.Object({
  status: StringEnum(['running', 'succeeded', 'failed']),
  at: Timestamp,
  error: Nullable(Type.String({ description: 'why the last sync failed; the previous list was kept' })),
});

/** Who may make a connection, and so whose provider account it may use (docs/security.md). */
export const MANAGED_BY = ['operator', 'workspace'] as const satisfies readonly ManagedBy[];

/** Fields only some connections have (livechat's settings): absent on the others. */
function optionalFields<T extends Record<string, TSchema>>(fields: T): { [K in keyof T]: TOptional<T[K]> } {
  return Object.fromEntries(Object.entries(fields).map(([k, v]) => [k, Type.Optional(v)])) as { [K in keyof T]: TOptional<T[K]> };
}

export const ConnectionResource = Type.Object(
  {
    id: Type.Integer(),
    integrationKey: Type.String(),
    externalAccountId: Type.String(),
    name: Type.String(),
    hasCredentials: Type.Boolean({ description: 'whether credentials are set; their values are never returned' }),
    allowedOrigins: Type.Optional(
      Type.Array(Type.String(), { description: 'livechat connections only: origins allowed to call the visitor routes; empty = any' }),
    ),
    ...optionalFields(LivechatSettingsFields),
    imapFolder: Type.Optional(Type.String({ description: 'email.imap connections only: the folder read' })),
    autoAssign: Type.Boolean({ description: 'new and reopened threads are routed to online agents under their cap (docs/teams.md)' }),
    businessAccountId: Nullable(Type.String({ description: 'WhatsApp Cloud: the WABA id whose templates are synced; null when unset' })),
    templatesSync: Nullable(TemplatesSync),
    managedBy: StringEnum(MANAGED_BY, {
      description:
        "who made it: `operator` (engage route, CLI) may fall back on the deployment's INBOX_INTEGRATIONS credentials; `workspace` (POST /v1/connections) sends only with its own",
    }),
    teamId: Nullable(Type.Integer({ description: 'the team new threads on the connection start in; null = none' })),
    webhookUrl: Nullable(
      Type.String({
        description:
          "the URL to paste into the provider's console: <INBOX_PUBLIC_URL>/webhooks/<integrationKey>/<connectionKey>; null for livechat, ai and email.imap (read over IMAP)",
      }),
    ),
    hasWebhookSecrets: Type.Boolean({ description: 'whether webhook secrets of its own are set; their values are never returned' }),
    webhookVerifyToken: Type.Optional(
      Type.String({ description: "Meta keys, to admins only: the verify token to paste into Meta's webhook settings" }),
    ),
    lastDeliveryAt: Nullable(Timestamp),
    lastErrorAt: Nullable(Timestamp),
    lastError: Nullable(Type.String({ description: 'the last delivery that failed to process, or send that failed, in words' })),
    awayMessage: Nullable(
      Type.String({
        description: 'answers a contact whose message opens a thread outside business hours, once per 12 h; null = off (docs/sla.md)',
      }),
    ),
    csat: CsatSetting,
    createdAt: Timestamp,
  },
  { title: 'Connection' },
);

/** Who a connection answer is for: its URL is built on INBOX_PUBLIC_URL; verify tokens are for admins. */
export interface ConnectionView {
  publicUrl: string;
  admin: boolean;
}

/** A new connection: `POST /v1/connections` (tenant) and `POST /v1/engage/workspaces/:id/connections`. */
export const ConnectionCreateBody = Type.Object({
  integrationKey: Type.String({ minLength: 1, maxLength: 64 }),
  externalAccountId: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 320,
      description: 'required, except for livechat: its widget key, generated (wk_…) when absent',
    }),
  ),
  name: ConnectionName,
  credentials: Type.Optional(ConnectionCredentials),
  webhookSecrets: Type.Optional(WebhookSecrets),
  allowedOrigins: Type.Optional(AllowedOrigins),
  title: Type.Optional(LivechatTitle),
  colour: Type.Optional(LivechatColour),
  greeting: Type.Optional(LivechatGreeting),
  preChatForm: Type.Optional(PreChatFormSchema),
  autoAssign: Type.Optional(AutoAssign),
  businessAccountId: Type.Optional(BusinessAccountId),
  teamId: Type.Optional(Nullable(ConnectionTeamId)),
  awayMessage: Type.Optional(AwayMessage),
  imapFolder: Type.Optional(ImapFolder),
  csat: Type.Optional(CsatSettingInput),
});

/**
 * `PATCH /v1/connections/:id`: `credentials` and `webhookSecrets` replace the previous ones
 * whole; null removes them. `allowedOrigins` (livechat) replace the previous list whole; of
 * livechat's `title`, `colour` and `greeting`, null returns to the widget's default.
 */
export const ConnectionPatch = Type.Object(
  {
    name: Type.Optional(ConnectionName),
    credentials: Type.Optional(Nullable(ConnectionCredentials)),
    webhookSecrets: Type.Optional(Nullable(WebhookSecrets)),
    allowedOrigins: Type.Optional(AllowedOrigins),
    title: Type.Optional(Nullable(LivechatTitle)),
    colour: Type.Optional(Nullable(LivechatColour)),
    greeting: Type.Optional(Nullable(LivechatGreeting)),
    preChatForm: Type.Optional(PreChatFormSchema),
    autoAssign: Type.Optional(AutoAssign),
    businessAccountId: Type.Optional(Nullable(BusinessAccountId)),
    teamId: Type.Optional(Nullable(ConnectionTeamId)),
    awayMessage: Type.Optional(AwayMessage),
    imapFolder: Type.Optional(Nullable(ImapFolder)),
    csat: Type.Optional(CsatSettingInput),
  },
  { additionalProperties: false, minProperties: 1 },
);

export function connectionResource(row: ConnectionRow, view: ConnectionView): Static<typeof ConnectionResource> {
  return {
    id: row.id,
    integrationKey: row.integration_key,
    externalAccountId: row.external_account_id,
    name: row.name,
    hasCredentials: row.has_credentials,
    ...(row.integration_key === 'livechat'
      ? {
          allowedOrigins: row.allowed_origins,
          title: row.livechat_title,
          colour: row.livechat_colour,
          greeting: row.livechat_greeting,
          preChatForm: row.livechat_pre_chat,
        }
      : {}),
    ...(row.integration_key === 'email.imap' ? { imapFolder: row.imap_folder ?? 'INBOX' } : {}),
    autoAssign: row.auto_assign,
    businessAccountId: row.business_account_id,
    templatesSync:
      row.templates_sync_status === null || row.templates_sync_at === null
        ? null
        : {
            status: row.templates_sync_status as 'running' | 'succeeded' | 'failed',
            at: row.templates_sync_at.toISOString(),
            error: row.templates_sync_error,
          },
    managedBy: row.managed_by,
    teamId: row.team_id,
    webhookUrl: webhookUrl(view.publicUrl, row.integration_key, row.connection_key),
    hasWebhookSecrets: row.has_webhook_secrets,
    ...(view.admin && row.webhook_verify_token !== null ? { webhookVerifyToken: row.webhook_verify_token } : {}),
    lastDeliveryAt: row.last_delivery_at?.toISOString() ?? null,
    lastErrorAt: row.last_error_at?.toISOString() ?? null,
    lastError: row.last_error,
    awayMessage: row.away_message,
    csat: { enabled: row.csat_enabled, question: row.csat_question },
    createdAt: row.created_at.toISOString(),
  };
}

/** The answer of an admin route (create, change): the verify token shows. */
const adminView = (deps: Pick<Deps, 'config'>): ConnectionView => ({ publicUrl: deps.config.publicUrl, admin: true });

/** An away message as stored: trimmed, and blank is off (null); undefined leaves it as it is. */
function awayMessageOf(text: string | null | undefined): string | null | undefined {
  return text === undefined || text === null ? text : text.trim() || null;
}

/** Templates live in a WhatsApp Business Account: only WhatsApp Cloud connections have one. */
function onlyWhatsapp(integrationKey: string) {
  if (integrationKey !== 'whatsapp') throw errors.validation('businessAccountId applies to whatsapp connections only');
}

function onlyMailboxes(integrationKey: string) {
  if (integrationKey !== 'email.imap') throw errors.validation('imapFolder applies to email.imap connections only');
}

/** What creating or changing a connection needs: credentials are sealed under `secretKey`. */
export type ConnectionDeps = Pick<Deps, 'db' | 'config' | 'secretKey'>;

/** INBOX_INTEGRATIONS.<key>: the deployment's settings of an integration, empty when it has none. */
const integrationSettings = (deps: Pick<Deps, 'config'>, integrationKey: string): IntegrationConfig =>
  deps.config.integrations[integrationKey as IntegrationKey] ?? {};

/** Keys whose account id is the sender's phone number, in E.164. */
const PHONE_ACCOUNT_KEYS: readonly string[] = ['sms', 'sms.twilio'];
/** A number in E.164 with the spaces, dashes, dots or brackets people write it with. */
const FORMATTED_E164 = /^\+[\s().-]*\d[\d\s().-]*$/;

/**
 * The account id and origins a new connection gets. A livechat connection's account id is its
 * public widget key, random unless one is given; only livechat connections have origins.
 */
function accountOf(input: { integrationKey: string; externalAccountId?: string; allowedOrigins?: string[] }) {
  if (input.integrationKey === 'livechat') {
    const key = input.externalAccountId ?? newWidgetKey();
    if (!WIDGET_KEY.test(key))
      throw errors.validation('a livechat externalAccountId is its widget key: 1 to 128 letters, digits, "_" or "-"');
    return { externalAccountId: key, allowedOrigins: checkAllowedOrigins(input.allowedOrigins ?? []) };
  }
  if (input.allowedOrigins !== undefined) throw errors.validation('allowedOrigins applies to livechat connections only');
  if (input.externalAccountId === undefined) throw errors.validation('body must have property "externalAccountId"');
  // Deliveries name their account exactly ("106540352242922", never " 106540352242922 "): an id
  // pasted with a space around it would be a connection no delivery ever finds, so it is trimmed.
  const account = input.externalAccountId.trim();
  if (account === '') throw errors.validation('externalAccountId must not be blank');
  // Twilio names the number in E.164 (`To=+15557122661`), and takes it so as the From of a
  // reply: one typed as consoles show it, `+1 (555) 712-2661`, is kept without the spacing.
  if (PHONE_ACCOUNT_KEYS.includes(input.integrationKey) && FORMATTED_E164.test(account))
    return { externalAccountId: `+${account.replace(/\D/g, '')}`, allowedOrigins: [] };
  if (input.integrationKey === 'email.imap' && !/^[^\s@]+@[^\s@]+$/.test(account))
    throw errors.validation("an email.imap externalAccountId is the mailbox's address, like support@example.com");
  // Inbound mail names its receiving address in lower case (channels/email-inbound.ts), so every
  // mail connection keeps its address so: `Support@Acme.test` receives mail sent to it.
  if (isEmailIntegration(input.integrationKey)) return { externalAccountId: account.toLowerCase(), allowedOrigins: [] };
  return { externalAccountId: account, allowedOrigins: [] };
}

/**
 * A `whatsapp_session` connection keeps a webhook signing secret for as long as it exists: its
 * own (`webhookSecrets`, null when it has none), or the operator's for a connection the operator
 * made. The gateway's deliveries could not be verified otherwise.
 */
function requireSessionSecret(
  deps: ConnectionDeps,
  integrationKey: string,
  managedBy: ManagedBy,
  webhookSecrets: WebhookSecrets | null | undefined,
) {
  if (integrationKey !== 'whatsapp_session') return;
  const secret =
    webhookSecrets?.webhookSecret ?? (managedBy === 'operator' ? deps.config.integrations.whatsapp_session?.webhookSecret : undefined);
  if (!secret) {
    throw errors.validation(
      'connecting a whatsapp_session requires a webhook signing secret of 16 to 255 characters: set webhookSecrets.webhookSecret, or whatsapp_session.webhookSecret in INBOX_INTEGRATIONS',
    );
  }
}

/**
 * Connects a channel account to a workspace, as `managedBy` says who is making it: the
 * operator (engage route, CLI) or the workspace's own admin (`POST /v1/connections`), whose
 * connection then sends only with its own credentials. A `whatsapp_session` connection is refused
 * unless the gateway's webhook signing secret (16..255 characters, checked at start) is
 * configured, because its deliveries could not be verified otherwise (docs/webhooks.md, "Integrations").
 * A livechat connection without an account id gets a random widget key (`wk_…`).
 */
export async function createConnection(
  deps: ConnectionDeps,
  workspaceId: number,
  input: {
    integrationKey: string;
    externalAccountId?: string;
    name: string;
    credentials?: ConnectionCredentials;
    webhookSecrets?: WebhookSecrets;
    allowedOrigins?: string[];
    title?: string;
    colour?: string;
    greeting?: string;
    preChatForm?: PreChatForm;
    autoAssign?: boolean;
    businessAccountId?: string;
    teamId?: number | null;
    awayMessage?: string | null;
    imapFolder?: string;
    csat?: { enabled: boolean; question?: string | null };
  },
  managedBy: ManagedBy,
  trail: Trail = systemTrail(workspaceId),
) {
  const { credentials, webhookSecrets, allowedOrigins: _origins, title, colour, greeting, preChatForm, csat, ...given } = input;
  if (given.businessAccountId !== undefined) onlyWhatsapp(given.integrationKey);
  if (given.imapFolder !== undefined) onlyMailboxes(given.integrationKey);
  if (!(INTEGRATION_KEYS as readonly string[]).includes(given.integrationKey)) {
    throw errors.validation(`integrationKey must be one of ${INTEGRATION_KEYS.join(', ')}`);
  }
  if (webhookSecrets !== undefined) checkWebhookSecrets(given.integrationKey, webhookSecrets);
  const verifyToken = META_KEYS.includes(given.integrationKey) ? (webhookSecrets?.webhookVerifyToken ?? newVerifyToken()) : null;
  const settings = checkLivechatSettings(given.integrationKey, { title, colour, greeting, preChatForm });
  const fields = {
    ...given,
    awayMessage: awayMessageOf(given.awayMessage),
    ...accountOf(input),
    ...settings,
    ...checkCsatSetting(given.integrationKey, csat),
    managedBy,
    connectionKey: newConnectionKey(),
    webhookVerifyToken: verifyToken,
  };
  requireSessionSecret(deps, fields.integrationKey, managedBy, webhookSecrets);
  if (credentials !== undefined)
    checkCredentials(fields.integrationKey, credentials, deploymentFallback(integrationSettings(deps, fields.integrationKey), managedBy));
  await requireWorkspace(deps.db, workspaceId);
  // A sealed value names its row (AAD), so the row must exist first: one transaction, which
  // the audit entry shares. The team is checked and kept in it, so it cannot go before the row
  // naming it commits.
  const row = await deps.db.transaction().execute(async (trx) => {
    if (fields.teamId !== undefined && fields.teamId !== null) await requireTeamOf(trx, workspaceId, fields.teamId);
    const inserted = await insertConnection(trx, { workspaceId, ...fields });
    const updated =
      credentials === undefined && webhookSecrets === undefined
        ? inserted
        : await updateConnection(trx, workspaceId, inserted.id, {
            credentialsSealed: credentials === undefined ? undefined : sealCredentials(deps.secretKey, inserted.id, credentials),
            webhookSecretsSealed:
              webhookSecrets === undefined ? undefined : sealWebhookSecrets(deps.secretKey, inserted.id, webhookSecrets),
          });
    if (!updated) throw errors.internal(); // the row this transaction just inserted
    const shown = { ...connectionResource(updated, adminView(deps)), credentials, webhookSecrets };
    const { id: _id, webhookUrl: _url, webhookVerifyToken: _token, templatesSync: _sync, ...audited } = shown;
    await recordAudit(trx, trail, 'connection.created', { type: 'connection', id: updated.id }, changesOf(null, audited, SECRET_FIELDS));
    return updated;
  });
  return connectionResource(row, adminView(deps));
}

/** What an audit entry shows only as "[set]": a connection's provider credentials and webhook secrets. */
const SECRET_FIELDS = ['credentials', 'webhookSecrets'] as const;

/** `DELETE /v1/connections/:id`: its deliveries stop; its threads stay. False when there is no such live connection. */
export async function deleteConnection(deps: Pick<Deps, 'db' | 'now'>, workspaceId: number, id: number, trail: Trail): Promise<boolean> {
  return deps.db.transaction().execute(async (trx) => {
    if (!(await markConnectionDeleted(trx, workspaceId, id, deps.now()))) return false;
    // A widget's visitors: their tokens end with it and, once this commits, every api process
    // closes their sockets (4003, as for a blocked visitor), so no widget waits on a dead chat.
    const handles = await endWidgetVisitorTokens(trx, id, deps.now());
    await publishVisitorEvents(
      trx,
      handles.map((visitor) => ({ type: 'visitor.blocked' as const, visitor })),
    );
    await recordAudit(trx, trail, 'connection.deleted', { type: 'connection', id });
    return true;
  });
}

/**
 * Renames a workspace's connection and/or sets (`credentials`) or removes (`null`) its
 * credentials. Turning `autoAssign` on routes the threads waiting on it, in the same transaction.
 */
export async function changeConnection(
  deps: ConnectionDeps & Pick<Deps, 'boss' | 'now' | 'log'>,
  workspaceId: number,
  id: number,
  patch: Static<typeof ConnectionPatch>,
  trail: Trail = systemTrail(workspaceId),
) {
  const current = await findConnection(deps.db, workspaceId, id);
  if (!current) throw errors.notFound('connection');
  let credentialsSealed: Buffer | null | undefined;
  if (patch.credentials === null) credentialsSealed = null;
  else if (patch.credentials !== undefined) {
    checkCredentials(
      current.integration_key,
      patch.credentials,
      deploymentFallback(integrationSettings(deps, current.integration_key), current.managed_by),
    );
    credentialsSealed = sealCredentials(deps.secretKey, id, patch.credentials);
  }
  let webhookSecretsSealed: Buffer | null | undefined;
  let webhookVerifyToken: string | undefined;
  if (patch.webhookSecrets === null) webhookSecretsSealed = null;
  else if (patch.webhookSecrets !== undefined) {
    checkWebhookSecrets(current.integration_key, patch.webhookSecrets);
    webhookSecretsSealed = sealWebhookSecrets(deps.secretKey, id, patch.webhookSecrets);
    webhookVerifyToken = patch.webhookSecrets.webhookVerifyToken;
  }
  // Replacing or removing them must not leave a session without a signing secret.
  if (patch.webhookSecrets !== undefined) requireSessionSecret(deps, current.integration_key, current.managed_by, patch.webhookSecrets);
  let allowedOrigins: string[] | undefined;
  if (patch.allowedOrigins !== undefined) {
    if (current.integration_key !== 'livechat') throw errors.validation('allowedOrigins applies to livechat connections only');
    allowedOrigins = checkAllowedOrigins(patch.allowedOrigins);
  }
  const settings = checkLivechatSettings(current.integration_key, patch);
  const csat = checkCsatSetting(current.integration_key, patch.csat);
  if (patch.businessAccountId !== undefined) onlyWhatsapp(current.integration_key);
  if (patch.imapFolder !== undefined) onlyMailboxes(current.integration_key);
  if (
    patch.name === undefined &&
    credentialsSealed === undefined &&
    webhookSecretsSealed === undefined &&
    allowedOrigins === undefined &&
    patch.autoAssign === undefined &&
    patch.businessAccountId === undefined &&
    patch.teamId === undefined &&
    patch.awayMessage === undefined &&
    patch.imapFolder === undefined &&
    patch.csat === undefined &&
    Object.keys(settings).length === 0
  )
    return connectionResource(current, adminView(deps));
  const row = await deps.db.transaction().execute(async (trx) => {
    // Checked and kept in the transaction: the team cannot go before this row naming it commits.
    if (patch.teamId !== undefined && patch.teamId !== null) await requireTeamOf(trx, workspaceId, patch.teamId);
    const updated = await updateConnection(trx, workspaceId, id, {
      name: patch.name,
      credentialsSealed,
      webhookSecretsSealed,
      webhookVerifyToken,
      allowedOrigins,
      autoAssign: patch.autoAssign,
      businessAccountId: patch.businessAccountId,
      teamId: patch.teamId,
      awayMessage: awayMessageOf(patch.awayMessage),
      imapFolder: patch.imapFolder,
      ...settings,
      ...csat,
    });
    if (updated && patch.autoAssign === true && !current.auto_assign) await routeWaiting(deps, trx, workspaceId, deps.now());
    // Templates live in the WABA they were read from: another one (or none) has not got them.
    const wabaChanged = patch.businessAccountId !== undefined && patch.businessAccountId !== current.business_account_id;
    if (updated && wabaChanged) await forgetTemplates(trx, id);
    if (updated) {
      const before = {
        ...connectionResource(current, adminView(deps)),
        credentials: current.has_credentials || null,
        webhookSecrets: current.has_webhook_secrets || null,
      };
      await recordAudit(trx, trail, 'connection.updated', { type: 'connection', id }, changesOf(before, patch, SECRET_FIELDS));
    }
    return updated && wabaChanged
      ? { ...updated, templates_sync_status: null, templates_sync_at: null, templates_sync_error: null }
      : updated;
  });
  if (!row) throw errors.notFound('connection'); // deleted meanwhile
  return connectionResource(row, adminView(deps));
}
