import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { type ApiKeyAuth, hasScope } from '../auth/auth.js';
import { packageVersion } from '../version.js';

type ToolAnswer = { content: { type: 'text'; text: string }[]; isError?: boolean };

/**
 * Each tool is one call of the public API made with the caller's own key, so a tool can do
 * exactly what the key may do over HTTP — same scopes, same workspace, same validation and
 * the same side effects (announcements, idempotency, audit) — and nothing more.
 */
function apiCaller(app: FastifyInstance, key: string) {
  return async (method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object): Promise<ToolAnswer> => {
    const res = await app.inject({
      method,
      url,
      headers: { 'x-api-key': key, ...(payload ? { 'content-type': 'application/json' } : {}) },
      ...(payload ? { payload: JSON.stringify(payload) } : {}),
    });
    const body = res.json() as { data?: unknown; meta?: { nextCursor?: string }; error?: { code: string; message: string } };
    if (res.statusCode >= 400)
      return { content: [{ type: 'text', text: `${body.error?.code ?? res.statusCode}: ${body.error?.message ?? ''}` }], isError: true };
    const meta = body.meta?.nextCursor ? { nextCursor: body.meta.nextCursor } : {};
    return { content: [{ type: 'text', text: JSON.stringify({ data: body.data, ...meta }) }] };
  };
}

const query = (params: Record<string, string | number | undefined>) => {
  const entries = Object.entries(params).filter(([, v]) => v !== undefined) as [string, string | number][];
  return entries.length > 0 ? `?${new URLSearchParams(entries.map(([k, v]): [string, string] => [k, String(v)])).toString()}` : '';
};

/** The MCP server of one caller: the reading tools, and the writing ones only for a `write` key. */
function serverFor(app: FastifyInstance, auth: ApiKeyAuth, key: string): McpServer {
  const server = new McpServer({ name: 'inbox', version: packageVersion() });
  const api = apiCaller(app, key);
  const threadId = z.number().int().positive().describe('the thread id');

  server.registerTool(
    'list_threads',
    {
      description: "The workspace's threads, newest activity first (one page; pass nextCursor back as cursor).",
      inputSchema: {
        status: z.string().optional().describe('open, pending, resolved, snoozed, or a comma list'),
        assigneeId: z.string().optional().describe('a user id, or none'),
        label: z.string().optional(),
        limit: z.number().int().min(1).max(100).optional(),
        cursor: z.string().optional(),
      },
    },
    (args) => api('GET', `/v1/threads${query(args)}`),
  );
  server.registerTool(
    'get_thread',
    { description: 'A thread and its newest messages (up to 50, newest first).', inputSchema: { threadId } },
    async ({ threadId: id }) => {
      const thread = await api('GET', `/v1/threads/${id}`);
      if (thread.isError) return thread;
      const messages = await api('GET', `/v1/threads/${id}/messages?limit=50`);
      if (messages.isError) return messages;
      const data = { thread: JSON.parse(thread.content[0]!.text).data, messages: JSON.parse(messages.content[0]!.text).data };
      return { content: [{ type: 'text', text: JSON.stringify({ data }) }] };
    },
  );
  server.registerTool(
    'search_messages',
    {
      description: 'Full-text search over the workspace\'s messages, newest first (web search syntax: "a phrase", or, -word).',
      inputSchema: { q: z.string().min(1).max(256), limit: z.number().int().min(1).max(100).optional(), cursor: z.string().optional() },
    },
    (args) => api('GET', `/v1/messages/search${query(args)}`),
  );
  server.registerTool(
    'get_contact',
    { description: 'A contact with its handles and attributes.', inputSchema: { contactId: z.number().int().positive() } },
    ({ contactId }) => api('GET', `/v1/contacts/${contactId}`),
  );
  if (!hasScope(auth, 'write')) return server;

  server.registerTool(
    'reply',
    {
      description: "Sends a reply to the thread's contact on its channel (queued; answers the queued message).",
      inputSchema: { threadId, text: z.string().min(1) },
    },
    ({ threadId: id, text }) => api('POST', `/v1/threads/${id}/messages`, { text }),
  );
  server.registerTool(
    'add_note',
    { description: 'Adds a private note for colleagues; never sent to the contact.', inputSchema: { threadId, text: z.string().min(1) } },
    ({ threadId: id, text }) => api('POST', `/v1/threads/${id}/messages`, { text, private: true }),
  );
  server.registerTool(
    'assign',
    {
      description: 'Assigns the thread to a user of the workspace, or unassigns it (assigneeId null).',
      inputSchema: { threadId, assigneeId: z.number().int().positive().nullable() },
    },
    ({ threadId: id, assigneeId }) => api('PATCH', `/v1/threads/${id}`, { assigneeId }),
  );
  server.registerTool(
    'set_status',
    {
      description: "Sets the thread's status; snoozed needs a future snoozedUntil (ISO 8601).",
      inputSchema: { threadId, status: z.enum(['open', 'pending', 'resolved', 'snoozed']), snoozedUntil: z.string().optional() },
    },
    ({ threadId: id, status, snoozedUntil }) => api('PATCH', `/v1/threads/${id}`, { status, ...(snoozedUntil ? { snoozedUntil } : {}) }),
  );
  return server;
}

/**
 * Answers one `/mcp` request with a server of its own, hijacking the reply: the SDK's
 * transport writes the response itself.
 */
export async function answerMcp(app: FastifyInstance, auth: ApiKeyAuth, key: string, request: FastifyRequest, reply: FastifyReply) {
  const server = serverFor(app, auth, key);
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  reply.hijack();
  reply.raw.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(request.raw, reply.raw, request.body);
}
