import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { BY_CREATED, keysetPage, offsetPage } from '../db/pages.js';
import type { ManagedBy } from '../db/types.js';
import type { CursorRequest, OffsetRequest } from '../http/pagination.js';
import type { CsatColumns } from './csat-settings.js';
import type { LivechatSettings } from './livechat-settings.js';

/**
 * What a connection answer is built from: every column but the sealed credentials and webhook
 * secrets, which only `findSealedCredentials` and `findWebhookConnection` read, plus whether
 * there are any.
 */
const COLUMNS = [
  'id',
  'workspace_id',
  'integration_key',
  'external_account_id',
  'name',
  'allowed_origins',
  'auto_assign',
  'business_account_id',
  'templates_sync_status',
  'templates_sync_at',
  'templates_sync_error',
  'managed_by',
  'team_id',
  'connection_key',
  'webhook_verify_token',
  'last_delivery_at',
  'last_error_at',
  'last_error',
  'away_message',
  'livechat_title',
  'livechat_colour',
  'livechat_greeting',
  'livechat_pre_chat',
  'imap_folder',
  'csat_enabled',
  'csat_question',
  'created_at',
] as const;
const hasCredentials = sql<boolean>`credentials_sealed IS NOT NULL`.as('has_credentials');
const hasWebhookSecrets = sql<boolean>`webhook_secrets_sealed IS NOT NULL`.as('has_webhook_secrets');
const SELECTED = [...COLUMNS, hasCredentials, hasWebhookSecrets] as const;

export async function insertConnection(
  db: Executor,
  row: {
    workspaceId: number;
    integrationKey: string;
    externalAccountId: string;
    name: string;
    allowedOrigins?: string[];
    autoAssign?: boolean;
    businessAccountId?: string;
    managedBy: ManagedBy;
    teamId?: number | null;
    awayMessage?: string | null;
    connectionKey: string;
    webhookVerifyToken: string | null;
    imapFolder?: string | null;
  } & LivechatSettings &
    CsatColumns,
) {
  return db
    .insertInto('connections')
    .values({
      workspace_id: row.workspaceId,
      integration_key: row.integrationKey,
      external_account_id: row.externalAccountId,
      name: row.name,
      allowed_origins: row.allowedOrigins ?? [],
      auto_assign: row.autoAssign ?? false,
      business_account_id: row.businessAccountId ?? null,
      managed_by: row.managedBy,
      team_id: row.teamId ?? null,
      away_message: row.awayMessage ?? null,
      connection_key: row.connectionKey,
      webhook_verify_token: row.webhookVerifyToken,
      livechat_title: row.livechatTitle ?? null,
      livechat_colour: row.livechatColour ?? null,
      livechat_greeting: row.livechatGreeting ?? null,
      livechat_pre_chat: row.livechatPreChat,
      imap_folder: row.imapFolder ?? null,
      csat_enabled: row.csatEnabled ?? false,
      csat_question: row.csatQuestion ?? null,
    })
    .returning(SELECTED)
    .executeTakeFirstOrThrow();
}

export type ConnectionRow = Awaited<ReturnType<typeof insertConnection>>;

/** One of a workspace's live connections; undefined when it is another workspace's, deleted or none. */
export async function findConnection(db: Executor, workspaceId: number, id: number): Promise<ConnectionRow | undefined> {
  return db
    .selectFrom('connections')
    .select(SELECTED)
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Changes a workspace's connection; `credentialsSealed: null` removes its credentials.
 * Undefined when the connection is not the workspace's.
 */
export async function updateConnection(
  db: Executor,
  workspaceId: number,
  id: number,
  patch: {
    name?: string;
    credentialsSealed?: Buffer | null;
    allowedOrigins?: string[];
    autoAssign?: boolean;
    businessAccountId?: string | null;
    teamId?: number | null;
    webhookSecretsSealed?: Buffer | null;
    webhookVerifyToken?: string;
    awayMessage?: string | null;
    imapFolder?: string | null;
  } & LivechatSettings &
    CsatColumns,
): Promise<ConnectionRow | undefined> {
  return db
    .updateTable('connections')
    .set({
      name: patch.name,
      credentials_sealed: patch.credentialsSealed,
      allowed_origins: patch.allowedOrigins,
      auto_assign: patch.autoAssign,
      business_account_id: patch.businessAccountId,
      team_id: patch.teamId,
      webhook_secrets_sealed: patch.webhookSecretsSealed,
      webhook_verify_token: patch.webhookVerifyToken,
      away_message: patch.awayMessage,
      livechat_title: patch.livechatTitle,
      livechat_colour: patch.livechatColour,
      livechat_greeting: patch.livechatGreeting,
      livechat_pre_chat: patch.livechatPreChat,
      imap_folder: patch.imapFolder,
      csat_enabled: patch.csatEnabled,
      csat_question: patch.csatQuestion,
    })
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .returning(SELECTED)
    .executeTakeFirst();
}

/** The sealed credentials of a connection, for connectionCredentials() alone. */
export async function findSealedCredentials(db: Executor, id: number): Promise<Buffer | null> {
  const row = await db.selectFrom('connections').select('credentials_sealed').where('id', '=', id).executeTakeFirst();
  return row?.credentials_sealed ?? null;
}

/** A workspace's connections, newest first, one cursor page. */
export async function listConnections(db: Executor, workspaceId: number, page: CursorRequest) {
  return keysetPage(
    db.selectFrom('connections').select(SELECTED).where('workspace_id', '=', workspaceId).where('deleted_at', 'is', null),
    BY_CREATED,
    page,
  );
}

/** Every connection with its workspace's app id, for the operator: offset page plus total. */
export async function listAllConnections(db: Executor, filter: { workspaceId?: number; integrationKey?: string }, page: OffsetRequest) {
  let q = db.selectFrom('connections').where('deleted_at', 'is', null);
  if (filter.workspaceId !== undefined) q = q.where('workspace_id', '=', filter.workspaceId);
  if (filter.integrationKey !== undefined) q = q.where('integration_key', '=', filter.integrationKey);
  return offsetPage(q, page, (b) => b.select(SELECTED).orderBy('id'));
}

/** What a delivery on a connection's own URL is verified and stored with. */
export interface WebhookConnection {
  id: number;
  external_account_id: string;
  managed_by: ManagedBy;
  webhook_secrets_sealed: Buffer | null;
  webhook_verify_token: string | null;
}

/** The live connection a webhook URL names; undefined when none (or deleted). */
export async function findWebhookConnection(
  db: Executor,
  integrationKey: string,
  connectionKey: string,
): Promise<WebhookConnection | undefined> {
  return db
    .selectFrom('connections')
    .select(['id', 'external_account_id', 'managed_by', 'webhook_secrets_sealed', 'webhook_verify_token'])
    .where('connection_key', '=', connectionKey)
    .where('integration_key', '=', integrationKey)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

/**
 * Deletes a workspace's connection, keeping the row (its threads reference it and stay) marked:
 * its URL stops answering and its account may be connected again. False when there was none.
 */
export async function markConnectionDeleted(db: Executor, workspaceId: number, id: number, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('connections')
    .set({ deleted_at: at })
    .where('id', '=', id)
    .where('workspace_id', '=', workspaceId)
    .where('deleted_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
