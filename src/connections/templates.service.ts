import { type Static, Type } from 'typebox';
import { SecretBoxError } from '../crypto/secret-box.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import {
  CREDENTIALS_DO_NOT_OPEN,
  connectionCredentials,
  lacksCredentials,
  NO_CREDENTIALS,
  providerCredentials,
} from './connection-credentials.js';
import { findConnection } from './connections.queries.js';
import { enqueueTemplateSync } from './sync-templates.queue.js';
import { listTemplates, setTemplatesSync } from './templates.queries.js';

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
 * Queues a sync (the `sync-templates` job, docs/replies.md) and answers at once with the
 * connection (`templatesSync.status: "running"`), set in the transaction that queues the job.
 * Success replaces the list in one transaction; any failure keeps the previous list and
 * records the error on the connection. What can be checked before asking the provider is
 * checked here, so a request that cannot succeed is a 4xx now rather than a `failed` later.
 */
export async function startTemplateSync(deps: Deps, workspaceId: number, connectionId: number) {
  const connection = await templateConnection(deps, workspaceId, connectionId);
  const integration = deps.config.integrations.whatsapp ?? {};
  // Opened now so credentials that do not open are the caller's 422, not a silent failure.
  let own: Record<string, string> | null;
  try {
    own = await connectionCredentials(deps, connectionId);
  } catch (err) {
    if (err instanceof SecretBoxError) throw errors.validation(CREDENTIALS_DO_NOT_OPEN);
    throw err;
  }
  if (lacksCredentials('whatsapp', connection.managed_by, own))
    throw errors.validation(`${NO_CREDENTIALS}: set its credentials first (PATCH /v1/connections/:id)`);
  if (!providerCredentials(integration, connection.managed_by, own).accessToken)
    throw errors.validation('the connection has no accessToken (and INBOX_INTEGRATIONS.whatsapp has none): set its credentials first');
  return deps.db.transaction().execute(async (trx) => {
    await setTemplatesSync(trx, connectionId, 'running', deps.now(), null);
    await enqueueTemplateSync(deps.boss, trx, { workspaceId, connectionId });
    const after = await findConnection(trx, workspaceId, connectionId);
    if (!after) throw errors.notFound('connection');
    return after;
  });
}
