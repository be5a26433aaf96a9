import { type ClientOptions, call, callData, type Envelope, InboxClientError, type Query } from './request.js';
import type { IdempotencyOptions } from './tenant.js';
import type {
  AuditEntry,
  AuditLogQuery,
  Connection,
  InboxStatus,
  Message,
  RequeueResult,
  WebhookInboxRecord,
  WebhookInboxRow,
  Workspace,
} from './types.js';

export interface OffsetPage<T> {
  data: T[];
  meta: { page: number; limit: number; total: number; hasMore: boolean; [key: string]: unknown };
}

function isOffsetMeta(meta: unknown): meta is OffsetPage<unknown>['meta'] {
  const m = meta as Record<string, unknown> | undefined;
  return !!m && typeof m.page === 'number' && typeof m.limit === 'number' && typeof m.total === 'number' && typeof m.hasMore === 'boolean';
}

const id = (value: number | string) => encodeURIComponent(String(value));

/**
 * Operator routes (the admin key, or a user with role `operator`). The operator client never
 * invents a meta: a list answered without its pagination meta raises `malformed_response`
 * (502), for offset pages and for the cursor-paged message transcripts alike.
 */
export function operatorClient(options: ClientOptions) {
  const client = {
    async page<T>(path: string, query: { page?: number; limit?: number } & Query = {}): Promise<OffsetPage<T>> {
      const body = await call<Envelope<T[]>>(options, path, { query });
      if (!isOffsetMeta(body.meta)) throw new InboxClientError('malformed_response', 502, `${path} answered without pagination meta`);
      return { data: body.data, meta: body.meta };
    },
    /** Every item, page after page while `meta.hasMore`. */
    async *all<T>(path: string, query: { limit?: number } & Query = {}): AsyncGenerator<T> {
      for (let page = 1; ; page++) {
        const result = await client.page<T>(path, { ...query, page });
        yield* result.data;
        if (!result.meta.hasMore) return;
      }
    },
    /** A transcript walked by cursor; its meta must be there even on the last page. */
    async *transcript<T>(path: string, query: { limit?: number } = {}): AsyncGenerator<T> {
      let cursor: string | undefined;
      do {
        const body = await call<Envelope<T[]>>(options, path, { query: { ...query, cursor } });
        if (typeof body.meta !== 'object' || body.meta === null) {
          throw new InboxClientError('malformed_response', 502, `${path} answered without pagination meta`);
        }
        yield* body.data;
        const next = (body.meta as { nextCursor?: unknown }).nextCursor;
        cursor = typeof next === 'string' ? next : undefined;
      } while (cursor);
    },
    tenants(query: { limit?: number } = {}): AsyncGenerator<Workspace> {
      return client.all<Workspace>('/v1/operator/tenants', query);
    },
    connections(
      query: { limit?: number; workspaceId?: number; integrationKey?: string } = {},
    ): AsyncGenerator<Connection & { workspaceId: number }> {
      return client.all('/v1/operator/connections', query);
    },
    webhookInbox(
      query: { limit?: number; status?: InboxStatus; integrationKey?: string; appId?: string } = {},
    ): AsyncGenerator<WebhookInboxRow> {
      return client.all<WebhookInboxRow>('/v1/operator/webhook-inbox', query);
    },
    webhookInboxRow: (rowId: string) => callData<WebhookInboxRecord>(options, `/v1/operator/webhook-inbox/${id(rowId)}`),
    /** Requeues any app's failed or dead-lettered delivery; answers the status it had before. */
    requeue: (rowId: string, opts: IdempotencyOptions = {}) =>
      callData<RequeueResult>(options, `/v1/operator/webhook-inbox/${id(rowId)}/requeue`, {
        method: 'POST',
        headers: { 'idempotency-key': opts.idempotencyKey },
      }),
    /** The platform operator's own actions, newest first (docs/security.md, "Audit log"). */
    auditLog(query: Omit<AuditLogQuery, 'cursor'> = {}): AsyncGenerator<AuditEntry> {
      return client.all<AuditEntry>('/v1/operator/audit-log', { ...query });
    },
    threadTranscript(tenantId: number, threadId: number, query: { limit?: number } = {}): AsyncGenerator<Message> {
      return client.transcript<Message>(`/v1/operator/tenants/${id(tenantId)}/threads/${id(threadId)}/messages`, query);
    },
  };
  return client;
}

export type OperatorClient = ReturnType<typeof operatorClient>;
