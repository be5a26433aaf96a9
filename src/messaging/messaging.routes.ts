import { Type } from '@sinclair/typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Selectable } from 'kysely';
import { requireAuth, tenantOf } from '../auth/auth.js';
import type { MessagesTable, ThreadsTable } from '../db/types.js';
import { BigId } from '../http/ids.js';
import type { Deps } from '../deps.js';
import { envelope } from '../http/envelope.js';
import { errors } from '../http/errors.js';
import { CursorQuery, parseCursorQuery } from '../http/pagination.js';
import type { Executor } from '../db/database.js';
import { findThread, listContacts, listHandles, listMessages, listThreads } from './messaging.queries.js';

export function threadResource(row: Selectable<ThreadsTable> & { integration_key: string }) {
  return {
    id: row.id,
    connectionId: row.connection_id,
    integrationKey: row.integration_key,
    contactId: row.contact_id,
    status: row.status,
    lastMessageAt: row.last_message_at.toISOString(),
    lastMessagePreview: row.last_message_preview,
    createdAt: row.created_at.toISOString(),
  };
}

export function messageResource(row: Selectable<MessagesTable>) {
  return {
    id: row.id,
    threadId: row.thread_id,
    direction: row.direction,
    externalId: row.external_id,
    text: row.text,
    status: row.status,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
  };
}

const ThreadParams = Type.Object({ id: BigId });

/**
 * A thread's messages, one cursor page, or `not_found` when the workspace has no such thread:
 * the tenant's own list and the operator's transcript are the same read.
 */
export async function transcriptPage(db: Executor, workspaceId: number, threadId: number, query: CursorQuery) {
  const thread = await findThread(db, workspaceId, threadId);
  if (!thread) throw errors.notFound('thread');
  const page = await listMessages(db, thread.id, parseCursorQuery(query));
  return { items: page.items.map(messageResource), meta: page.meta };
}

/** Tenant lists of what the workers made: threads, their messages, contacts (cursor pages). */
export const messagingRoutes: FastifyPluginAsyncTypebox<{ deps: Deps }> = async (app, { deps }) => {
  app.addHook('preHandler', requireAuth(deps));

  app.get('/threads', { schema: { querystring: CursorQuery } }, async (request) => {
    const page = await listThreads(deps.db, tenantOf(request).workspaceId, parseCursorQuery(request.query));
    return envelope(request, page.items.map(threadResource), page.meta);
  });

  app.get('/threads/:id', { schema: { params: ThreadParams } }, async (request) => {
    const thread = await findThread(deps.db, tenantOf(request).workspaceId, request.params.id);
    if (!thread) throw errors.notFound('thread');
    return envelope(request, threadResource(thread));
  });

  app.get('/threads/:id/messages', { schema: { params: ThreadParams, querystring: CursorQuery } }, async (request) => {
    const page = await transcriptPage(deps.db, tenantOf(request).workspaceId, request.params.id, request.query);
    return envelope(request, page.items, page.meta);
  });

  app.get('/contacts', { schema: { querystring: CursorQuery } }, async (request) => {
    const page = await listContacts(deps.db, tenantOf(request).workspaceId, parseCursorQuery(request.query));
    const handles = await listHandles(deps.db, page.items.map((c) => c.id));
    return envelope(
      request,
      page.items.map((c) => ({
        id: c.id,
        name: c.name,
        handles: handles.filter((h) => h.contact_id === c.id).map((h) => ({ integrationKey: h.integration_key, externalId: h.external_id })),
        createdAt: c.created_at.toISOString(),
      })),
      page.meta,
    );
  });
};
