import { type Static, Type } from 'typebox';
import { META_GRAPH_API } from '../channels/provider-http.js';
import { fetchWhatsappTemplates } from '../channels/whatsapp-templates.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { connectionCredentials } from './connection-credentials.js';
import { findConnection } from './connections.queries.js';
import { componentText, countParameters } from './template-parameters.js';
import { listTemplates, replaceTemplates, setTemplatesSync, type TemplateRow } from './templates.queries.js';

/** A provider that has not answered a page in this long fails the sync. */
const SYNC_PAGE_TIMEOUT_MS = 10_000;

export const TemplateResource = Type.Object(
  {
    name: Type.String(),
    language: Type.String({ description: "Meta's language code as it comes, e.g. en_US" }),
    category: Type.String({ description: 'as Meta lists it: UTILITY, MARKETING, AUTHENTICATION' }),
    status: Type.String({ description: 'as Meta lists it; only APPROVED templates can be sent' }),
    components: Type.Array(Type.Unknown(), { description: "Meta's components as they come" }),
    parameterCount: Type.Integer({ description: 'how many {{n}} the body has' }),
  },
  { title: 'WhatsappTemplate' },
);

/** A workspace's WhatsApp Cloud connection with its WABA id, or the 404/422 that says why not. */
async function templateConnection(deps: Pick<Deps, 'db'>, workspaceId: number, connectionId: number) {
  const connection = await findConnection(deps.db, workspaceId, connectionId);
  if (!connection) throw errors.notFound('connection');
  if (connection.integration_key !== 'whatsapp') throw errors.validation('templates are a whatsapp (WhatsApp Cloud) feature');
  if (!connection.business_account_id)
    throw errors.validation('the connection has no businessAccountId: set it with PATCH /v1/connections/:id first');
  return { ...connection, business_account_id: connection.business_account_id };
}

export async function listConnectionTemplates(deps: Pick<Deps, 'db'>, workspaceId: number, connectionId: number) {
  const connection = await findConnection(deps.db, workspaceId, connectionId);
  if (!connection) throw errors.notFound('connection');
  const rows = await listTemplates(deps.db, connectionId);
  return rows.map(
    (r): Static<typeof TemplateResource> => ({
      name: r.name,
      language: r.language,
      category: r.category,
      status: r.status,
      components: Array.isArray(r.components) ? r.components : [],
      parameterCount: r.parameter_count,
    }),
  );
}

/**
 * Starts a sync and answers at once with the connection (`templatesSync.status: "running"`);
 * the pages are read after the answer. Success replaces the list in one transaction; any
 * failure keeps the previous list and records the error on the connection (docs/replies.md).
 * A process that dies mid-sync leaves `running`: the next sync simply starts again.
 */
export async function startTemplateSync(deps: Deps, workspaceId: number, connectionId: number) {
  const connection = await templateConnection(deps, workspaceId, connectionId);
  const integration = deps.config.integrations.whatsapp ?? {};
  // Opened now so credentials that do not open are the caller's 4xx/5xx, not a silent failure.
  const own = await connectionCredentials(deps, connectionId);
  const accessToken = own?.accessToken ?? integration.accessToken;
  if (!accessToken)
    throw errors.validation('the connection has no accessToken (and INBOX_INTEGRATIONS.whatsapp has none): set its credentials first');
  await setTemplatesSync(deps.db, connectionId, 'running', deps.now(), null);
  const after = await findConnection(deps.db, workspaceId, connectionId);
  if (!after) throw errors.notFound('connection');
  const run = syncTemplates(deps, {
    connectionId,
    wabaId: connection.business_account_id,
    accessToken,
    apiBaseUrl: integration.apiBaseUrl ?? META_GRAPH_API,
  });
  // Not awaited: the answer is 202 and the outcome is read on the connection.
  run.catch((err: unknown) => deps.log.error({ err, connectionId }, 'template sync could not record its outcome'));
  return after;
}

async function syncTemplates(deps: Deps, job: { connectionId: number; wabaId: string; accessToken: string; apiBaseUrl: string }) {
  let rows: TemplateRow[];
  try {
    const listed = await fetchWhatsappTemplates({ ...job, timeoutMs: SYNC_PAGE_TIMEOUT_MS });
    const unique = new Map(listed.map((t) => [`${t.name}\u0000${t.language}`, t]));
    rows = [...unique.values()].map((t) => ({ ...t, parameterCount: countParameters(componentText(t.components, 'BODY')) }));
  } catch (err) {
    const error = (err as Error).message;
    deps.log.warn({ connectionId: job.connectionId, error }, 'template sync failed; the previous list is kept');
    await setTemplatesSync(deps.db, job.connectionId, 'failed', deps.now(), error);
    return;
  }
  // The connection's row is updated first: its lock makes two syncs that finish together
  // replace the list one after the other instead of colliding on the same keys.
  await deps.db.transaction().execute(async (trx) => {
    await setTemplatesSync(trx, job.connectionId, 'succeeded', deps.now(), null);
    await replaceTemplates(trx, job.connectionId, rows);
  });
}
