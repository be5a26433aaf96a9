import type { Static } from 'typebox';
import type { ApiKeyResource } from '../api-keys/api-keys.service.js';
import type { ConnectionResource } from '../connections/connections.service.js';
import type { InboxSummary } from '../webhooks-in/inbox.resource.js';
import type { ContactResource, MessageResource, ThreadResource } from '../messaging/messaging.resources.js';
import type { DeliveryResource, EndpointResource } from '../webhooks-out/endpoint.resources.js';
import type { WorkspaceResource } from '../workspaces/workspaces.service.js';

/**
 * A small typed client for the service's JSON API, for programs and for proxies in front of
 * it (`import { tenantClient } from 'inbox/client'`). It walks both pagination shapes of
 * SPEC §8.1 the way the contract says they must be walked, and passes `meta` through
 * untouched. Its item types are the server's own response schemas, so they cannot drift.
 */

export type Thread = Static<typeof ThreadResource>;
export type Message = Static<typeof MessageResource>;
export type Contact = Static<typeof ContactResource>;
export type Connection = Static<typeof ConnectionResource>;
export type ApiKey = Static<typeof ApiKeyResource>;
export type Workspace = Static<typeof WorkspaceResource>;
export type WebhookInboxRow = Static<typeof InboxSummary>;
export type WebhookEndpoint = Static<typeof EndpointResource>;
export type WebhookDelivery = Static<typeof DeliveryResource>;

export class InboxClientError extends Error {
  constructor(
    readonly code: string,
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'InboxClientError';
  }
}

export interface ClientOptions {
  baseUrl: string;
  /** Sent as `Authorization: Bearer …` (a JWT or a personal-access token). */
  token?: string;
  /** Sent as `x-api-key`. */
  apiKey?: string;
  /** Sent as `X-Service-Admin-API-Key` (operator lists). */
  adminKey?: string;
  fetch?: typeof fetch;
}

export interface Envelope<T> {
  data: T;
  meta: Record<string, unknown>;
}

type Query = Record<string, string | number | undefined>;

async function request<T>(options: ClientOptions, path: string, query: Query = {}): Promise<{ body: Envelope<T> & Record<string, unknown> }> {
  const url = new URL(path, options.baseUrl);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  const headers: Record<string, string> = { accept: 'application/json' };
  if (options.token) headers.authorization = `Bearer ${options.token}`;
  if (options.apiKey) headers['x-api-key'] = options.apiKey;
  if (options.adminKey) headers['x-service-admin-api-key'] = options.adminKey;
  const res = await (options.fetch ?? fetch)(url, { headers });
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new InboxClientError('malformed_response', 502, `${url.pathname} answered ${res.status} with a body that is not JSON`);
  }
  if (!res.ok) {
    const error = (body as { error?: { code?: string; message?: string } }).error;
    throw new InboxClientError(error?.code ?? 'http_error', res.status, error?.message ?? `HTTP ${res.status}`);
  }
  return { body: body as Envelope<T> & Record<string, unknown> };
}

export interface CursorPage<T> {
  data: T[];
  meta: { nextCursor?: string; [key: string]: unknown };
}

export interface OffsetPage<T> {
  data: T[];
  meta: { page: number; limit: number; total: number; hasMore: boolean; [key: string]: unknown };
}

/** Tenant lists (cursor pages). A missing meta is the normal end: it reads as `{}`. */
export function tenantClient(options: ClientOptions) {
  return {
    async page<T>(path: string, query: { limit?: number; cursor?: string } = {}): Promise<CursorPage<T>> {
      const { body } = await request<T[]>(options, path, query);
      return { data: body.data, meta: (body.meta ?? {}) as CursorPage<T>['meta'] };
    },
    /** Every item, following `meta.nextCursor` while it is present (a short page is not the end). */
    async *all<T>(path: string, query: { limit?: number } = {}): AsyncGenerator<T> {
      let cursor: string | undefined;
      do {
        const page = await this.page<T>(path, { ...query, cursor });
        yield* page.data;
        cursor = page.meta.nextCursor;
      } while (cursor);
    },
    threads: (query: { limit?: number } = {}) => walk<Thread>(options, '/v1/threads', query),
    messages: (threadId: number, query: { limit?: number } = {}) => walk<Message>(options, `/v1/threads/${threadId}/messages`, query),
    contacts: (query: { limit?: number } = {}) => walk<Contact>(options, '/v1/contacts', query),
    connections: (query: { limit?: number } = {}) => walk<Connection>(options, '/v1/connections', query),
    apiKeys: (query: { limit?: number } = {}) => walk<ApiKey>(options, '/v1/api-keys', query),
    webhookEndpoints: (query: { limit?: number } = {}) => walk<WebhookEndpoint>(options, '/v1/webhook-endpoints', query),
    webhookDeliveries: (endpointId: number, query: { limit?: number } = {}) => walk<WebhookDelivery>(options, `/v1/webhook-endpoints/${endpointId}/deliveries`, query),
  };
}

/** Every item of a tenant list, page after page, as an async iterator. */
function walk<T>(options: ClientOptions, path: string, query: { limit?: number }): AsyncGenerator<T> {
  return tenantClient(options).all<T>(path, query);
}

function isOffsetMeta(meta: unknown): meta is OffsetPage<unknown>['meta'] {
  const m = meta as Record<string, unknown> | undefined;
  return !!m && typeof m.page === 'number' && typeof m.limit === 'number' && typeof m.total === 'number' && typeof m.hasMore === 'boolean';
}

/**
 * Operator lists. The operator client never invents a meta: a list answered without its
 * pagination meta raises `malformed_response` (502), for offset pages and for the cursor-paged
 * message transcripts alike.
 */
export function operatorClient(options: ClientOptions) {
  return {
    async page<T>(path: string, query: { page?: number; limit?: number } & Query = {}): Promise<OffsetPage<T>> {
      const { body } = await request<T[]>(options, path, query);
      if (!isOffsetMeta(body.meta)) throw new InboxClientError('malformed_response', 502, `${path} answered without pagination meta`);
      return { data: body.data, meta: body.meta };
    },
    /** Every item, page after page while `meta.hasMore`. */
    async *all<T>(path: string, query: { limit?: number } & Query = {}): AsyncGenerator<T> {
      for (let page = 1; ; page++) {
        const result = await this.page<T>(path, { ...query, page });
        yield* result.data;
        if (!result.meta.hasMore) return;
      }
    },
    /** A transcript walked by cursor; its meta must be there even on the last page. */
    async *transcript<T>(path: string, query: { limit?: number } = {}): AsyncGenerator<T> {
      let cursor: string | undefined;
      do {
        const { body } = await request<T[]>(options, path, { ...query, cursor });
        if (typeof body.meta !== 'object' || body.meta === null) {
          throw new InboxClientError('malformed_response', 502, `${path} answered without pagination meta`);
        }
        yield* body.data;
        const next = (body.meta as { nextCursor?: unknown }).nextCursor;
        cursor = typeof next === 'string' ? next : undefined;
      } while (cursor);
    },
    tenants(query: { limit?: number } = {}): AsyncGenerator<Workspace> {
      return this.all<Workspace>('/v1/operator/tenants', query);
    },
    connections(query: { limit?: number; workspaceId?: number; integrationKey?: string } = {}): AsyncGenerator<Connection & { workspaceId: number }> {
      return this.all('/v1/operator/connections', query);
    },
    webhookInbox(query: { limit?: number; status?: WebhookInboxRow['status']; integrationKey?: string; appId?: string } = {}): AsyncGenerator<WebhookInboxRow> {
      return this.all<WebhookInboxRow>('/v1/operator/webhook-inbox', query);
    },
    threadTranscript(tenantId: number, threadId: number, query: { limit?: number } = {}): AsyncGenerator<Message> {
      return this.transcript<Message>(`/v1/operator/tenants/${tenantId}/threads/${threadId}/messages`, query);
    },
  };
}
