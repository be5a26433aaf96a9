import type { Executor } from '../db/database.js';

export interface TemplateRow {
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown;
  parameterCount: number;
}

/** A connection's synced templates, by name then language. */
export async function listTemplates(db: Executor, connectionId: number) {
  return db
    .selectFrom('whatsapp_templates')
    .select(['name', 'language', 'category', 'status', 'components', 'parameter_count'])
    .where('connection_id', '=', connectionId)
    .orderBy('name')
    .orderBy('language')
    .execute();
}

/** One synced template of a connection, or undefined. */
export async function findTemplate(db: Executor, connectionId: number, name: string, language: string) {
  return db
    .selectFrom('whatsapp_templates')
    .select(['name', 'language', 'category', 'status', 'components', 'parameter_count'])
    .where('connection_id', '=', connectionId)
    .where('name', '=', name)
    .where('language', '=', language)
    .executeTakeFirst();
}

/**
 * Replaces a connection's list whole (rows unique by name and language); the caller runs it
 * in the transaction that records the sync's success.
 */
export async function replaceTemplates(db: Executor, connectionId: number, rows: TemplateRow[]) {
  await db.deleteFrom('whatsapp_templates').where('connection_id', '=', connectionId).execute();
  if (rows.length === 0) return;
  await db
    .insertInto('whatsapp_templates')
    .values(
      rows.map((r) => ({
        connection_id: connectionId,
        name: r.name,
        language: r.language,
        category: r.category,
        status: r.status,
        // jsonb: pg would send a JS array as a Postgres array, so it goes as JSON text.
        components: JSON.stringify(r.components),
        parameter_count: r.parameterCount,
      })),
    )
    .execute();
}

/** Records a sync's state on its connection. */
export async function setTemplatesSync(db: Executor, connectionId: number, status: string, at: Date, error: string | null) {
  await db
    .updateTable('connections')
    .set({ templates_sync_status: status, templates_sync_at: at, templates_sync_error: error })
    .where('id', '=', connectionId)
    .execute();
}

/**
 * Records a sync's success on its connection, only while the connection still names `wabaId`:
 * a list read from an account the connection no longer names is not stored (answers false).
 * The row's lock makes two syncs that finish together replace the list one after the other.
 */
export async function setTemplatesSynced(db: Executor, connectionId: number, wabaId: string, at: Date): Promise<boolean> {
  const updated = await db
    .updateTable('connections')
    .set({ templates_sync_status: 'succeeded', templates_sync_at: at, templates_sync_error: null })
    .where('id', '=', connectionId)
    .where('business_account_id', '=', wabaId)
    .executeTakeFirst();
  return updated.numUpdatedRows > 0n;
}

/**
 * Forgets a connection's list and its sync state, when the connection stops naming the
 * account (WABA) they were read from: they are not that connection's templates any more.
 */
export async function forgetTemplates(db: Executor, connectionId: number) {
  await db.deleteFrom('whatsapp_templates').where('connection_id', '=', connectionId).execute();
  await db
    .updateTable('connections')
    .set({ templates_sync_status: null, templates_sync_at: null, templates_sync_error: null })
    .where('id', '=', connectionId)
    .execute();
}

/** Whether any connection of the workspace has this template synced (a rule or macro names one). */
export async function workspaceHasTemplate(db: Executor, workspaceId: number, name: string, language: string): Promise<boolean> {
  const row = await db
    .selectFrom('whatsapp_templates')
    .innerJoin('connections', 'connections.id', 'whatsapp_templates.connection_id')
    .select('whatsapp_templates.name')
    .where('connections.workspace_id', '=', workspaceId)
    .where('whatsapp_templates.name', '=', name)
    .where('whatsapp_templates.language', '=', language)
    .executeTakeFirst();
  return row !== undefined;
}
