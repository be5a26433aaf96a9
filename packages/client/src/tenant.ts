import { multipartFile } from './multipart.js';
import { type ClientOptions, call, callData, type Envelope, type Query } from './request.js';
import type {
  AiPromptOptions,
  AiRewriteRequest,
  AiSuggestion,
  ApiKey,
  ApiKeyCreate,
  Attachment,
  AuditEntry,
  AuditLogQuery,
  AuthCode,
  AutomationRule,
  AutomationRuleCreate,
  AutomationRulePatch,
  BlobLike,
  CannedResponse,
  CannedResponseCreate,
  CannedResponsePatch,
  Connection,
  ConnectionCheck,
  ConnectionCreate,
  ConnectionPatch,
  Contact,
  ContactMerge,
  ContactPatch,
  CsatResponse,
  CsatResponseQuery,
  Deleted,
  EventLogQuery,
  HtmlLink,
  InboxStatus,
  InviteAccept,
  IssuedApiKey,
  IssuedPersonalAccessToken,
  Label,
  LoginRequest,
  LoginResponse,
  Macro,
  MacroCreate,
  MacroPatch,
  Message,
  MessageSearch,
  Notification,
  OwnUserPatch,
  PasswordChange,
  PasswordChanged,
  PasswordReset,
  PasswordResetAccepted,
  PasswordResetConfirm,
  PersonalAccessToken,
  PersonalAccessTokenCreate,
  ReplyRequest,
  ReportGroupBy,
  ReportInterval,
  ReportMetric,
  ReportPoint,
  ReportRange,
  ReportSummary,
  RequeueResult,
  SetupRequest,
  SetupResult,
  SetupStatus,
  SlaPolicy,
  SlaPolicyCreate,
  SlaPolicyPatch,
  StartConversationRequest,
  StartedConversation,
  Team,
  TeamCreate,
  TeamMembers,
  TeamPatch,
  TeamUser,
  TeamUserCreate,
  TeamUserPatch,
  Thread,
  ThreadCounts,
  ThreadCountsQuery,
  ThreadFilters,
  ThreadPatch,
  ThreadViewing,
  TwoFactorEnabled,
  TwoFactorSetup,
  TwoFactorStatus,
  User,
  Viewing,
  VisitorBlocked,
  WebhookDelivery,
  WebhookEndpoint,
  WebhookEndpointCreate,
  WebhookEndpointPatch,
  WebhookEndpointWithSecret,
  WebhookInboxRecord,
  WebhookInboxRow,
  WhatsappTemplate,
  WorkspaceSettings,
  WorkspaceSettingsPatch,
} from './types.js';
import type { WebhookEvent } from './webhooks.js';

export interface CursorPage<T> {
  data: T[];
  meta: { nextCursor?: string; [key: string]: unknown };
}

export interface ListQuery {
  /** Page size of each request (the service defaults to 25 and clamps above 100). */
  limit?: number;
}

export interface IdempotencyOptions {
  /** Sent as `Idempotency-Key`: a retry with the same key never acts twice. */
  idempotencyKey?: string;
}

const id = (value: number | string) => encodeURIComponent(String(value));

/**
 * The tenant API: a workspace's threads (filtered, worked and read), messages (replies, notes
 * and search), labels, contacts, canned responses, users, teams, connections, API keys, webhook
 * endpoints, dead letters and personal-access tokens, and the `/api/user` session routes.
 * Lists are async iterators that follow `meta.nextCursor` while it is present (a short page
 * is not the end; a missing `meta` is). `login` and `generateToken` keep the token they
 * receive and send it from then on; `refresh` replaces it and `logout` forgets it.
 */
export function tenantClient(initial: ClientOptions) {
  const options: ClientOptions = { ...initial };
  const get = <T>(path: string, query?: Query) => callData<T>(options, path, { query });
  const send = <T>(
    method: 'POST' | 'PUT' | 'PATCH' | 'DELETE',
    path: string,
    body?: unknown,
    headers?: Record<string, string | undefined>,
    query?: Query,
  ) => callData<T>(options, path, { method, body, headers, query });
  const remove = (path: string) => callData<Deleted>(options, path, { method: 'DELETE' });
  const session = (answer: LoginResponse): LoginResponse => {
    options.token = answer.access_token;
    return answer;
  };

  const client = {
    /** The bearer token the client sends now (after `login`, `refresh` or `generateToken`). */
    get token(): string | undefined {
      return options.token;
    },

    // ---- any list, by path ----
    async page<T>(path: string, query: { limit?: number; cursor?: string } & Query = {}): Promise<CursorPage<T>> {
      const body = await call<Envelope<T[]>>(options, path, { query });
      return { data: body.data, meta: (body.meta ?? {}) as CursorPage<T>['meta'] };
    },
    /** Every item, following `meta.nextCursor` while it is present. */
    async *all<T>(path: string, query: ListQuery & Query = {}): AsyncGenerator<T> {
      let cursor: string | undefined;
      do {
        const page = await client.page<T>(path, { ...query, cursor });
        yield* page.data;
        cursor = page.meta.nextCursor;
      } while (cursor);
    },

    // ---- /api/user: sessions ----
    login: async (body: LoginRequest) => session(await call<LoginResponse>(options, '/api/user/login', { method: 'POST', body })),
    me: () => get<User>('/api/user/user'),
    refresh: async () => session(await call<LoginResponse>(options, '/api/user/refresh', { method: 'POST' })),
    logout: async (): Promise<void> => {
      await call<void>(options, '/api/user/logout', { method: 'POST' });
      options.token = undefined;
    },
    generateCode: () => send<AuthCode>('POST', '/api/user/generate-code'),
    generateToken: async (authCode: string) =>
      session(await call<LoginResponse>(options, '/api/user/generate-token', { method: 'POST', body: { auth_code: authCode } })),

    // ---- passwords, invites and the first run (docs/accounts.md) ----
    /** Signed in: every other session of the user ends. */
    changePassword: (body: PasswordChange) => send<PasswordChanged>('POST', '/v1/users/me/password', body),
    /** 202 whatever the address; a link is mailed when it is an active user's. */
    requestPasswordReset: (body: PasswordReset) => send<PasswordResetAccepted>('POST', '/api/user/password-reset', body),
    confirmPasswordReset: (body: PasswordResetConfirm) => send<User>('POST', '/api/user/password-reset/confirm', body),
    // ---- two-factor sign-in (docs/security.md) ----
    twoFactor: () => get<TwoFactorStatus>('/v1/users/me/2fa'),
    setupTwoFactor: () => send<TwoFactorSetup>('POST', '/v1/users/me/2fa/setup'),
    enableTwoFactor: (code: string) => send<TwoFactorEnabled>('POST', '/v1/users/me/2fa/enable', { code }),
    disableTwoFactor: (password: string) => send<TwoFactorStatus>('POST', '/v1/users/me/2fa/disable', { password }),
    /** An admin turns a user's two-factor sign-in off (a lost phone). */
    resetTwoFactor: (userId: number) => send<TwoFactorStatus>('POST', `/v1/users/${id(userId)}/2fa/reset`),
    acceptInvite: (body: InviteAccept) => send<User>('POST', '/api/user/invite/accept', body),
    setupStatus: () => get<SetupStatus>('/api/user/setup'),
    setup: (body: SetupRequest) => send<SetupResult>('POST', '/api/user/setup', body),

    // ---- conversations ----
    /** Most recently active first; the filters combine (docs/conversations.md). */
    threads: ({ status, priority, ...query }: ListQuery & ThreadFilters = {}) =>
      client.all<Thread>('/v1/threads', {
        ...query,
        status: Array.isArray(status) ? status.join(',') : status,
        priority: Array.isArray(priority) ? priority.join(',') : priority,
      }),
    thread: (threadId: number) => get<Thread>(`/v1/threads/${id(threadId)}`),
    /** Status (with a snooze's end), assignee, labels: at least one field. */
    updateThread: (threadId: number, patch: ThreadPatch) => send<Thread>('PATCH', `/v1/threads/${id(threadId)}`, patch),
    /** The caller has read the thread: `agentLastSeenAt` is now and `unreadCount` 0. */
    markThreadRead: (threadId: number) => send<Thread>('POST', `/v1/threads/${id(threadId)}/read`),
    messages: (threadId: number, query: ListQuery = {}) => client.all<Message>(`/v1/threads/${id(threadId)}/messages`, { ...query }),
    /**
     * A reply, queued and answered at once (202, `queued`), or with `private: true` a note
     * for colleagues, stored and never sent (201, `kind: 'note'`). The idempotency key may
     * come in the body or in `opts`; it is sent as a header, never in the body.
     */
    reply: (threadId: number, { idempotencyKey, ...body }: ReplyRequest & IdempotencyOptions, opts: IdempotencyOptions = {}) =>
      send<Message>('POST', `/v1/threads/${id(threadId)}/messages`, body, {
        'idempotency-key': opts.idempotencyKey ?? idempotencyKey,
      }),
    /** A link (5 minutes, no credential) to an e-mail message's sanitized HTML with its own CSP, for a frame. */
    messageHtmlLink: (messageId: number) => send<HtmlLink>('POST', `/v1/messages/${id(messageId)}/html-link`),
    conversations: {
      /**
       * Speaks first: finds or creates the contact by `to` and its thread on the connection and
       * queues the message (202). The idempotency key may come in the body or in `opts`.
       */
      start: ({ idempotencyKey, ...body }: StartConversationRequest & IdempotencyOptions, opts: IdempotencyOptions = {}) =>
        send<StartedConversation>('POST', '/v1/conversations', body, { 'idempotency-key': opts.idempotencyKey ?? idempotencyKey }),
    },
    // ---- attachments (docs/attachments.md) ----
    attachments: {
      /**
       * Uploads a file to send with a reply (`write` scope): bytes or a Blob/File, with its
       * name. The service reads the type from the bytes; `contentType` is the fallback it
       * keeps when they do not say. An upload no message uses within 24 h is deleted.
       */
      upload: async (file: Uint8Array | BlobLike, filename: string, uploadOptions: { contentType?: string } = {}) => {
        const bytes = file instanceof Uint8Array ? file : new Uint8Array(await file.arrayBuffer());
        const contentType = uploadOptions.contentType ?? (file instanceof Uint8Array ? undefined : file.type) ?? undefined;
        const rawBody = multipartFile('file', filename, contentType || 'application/octet-stream', bytes);
        return callData<Attachment>(options, '/v1/attachments', { method: 'POST', rawBody });
      },
      /** An attachment: poll it while `pending`. */
      get: (attachmentId: number) => get<Attachment>(`/v1/attachments/${id(attachmentId)}`),
      /** Where its bytes are served (send the same credential to read them). */
      contentUrl: (attachmentId: number) => `${options.baseUrl.replace(/\/+$/, '')}/v1/attachments/${id(attachmentId)}/content`,
    },
    /** Full-text search over the workspace's messages, newest first; API keys never find private notes. */
    searchMessages: (query: ListQuery & MessageSearch) => client.all<Message>('/v1/messages/search', { ...query }),
    /** Every label on the workspace's threads with its open threads (one list, not paged). */
    labels: () => get<Label[]>('/v1/labels'),
    /** Ends the live chat visitor's token of a thread at once (422 for a thread of another channel). */
    blockVisitor: (threadId: number) => send<VisitorBlocked>('POST', `/v1/threads/${id(threadId)}/block-visitor`),

    // ---- AI assist on the workspace's own model (docs/ai.md; 409 `ai_disabled` while it is off) ----
    /** A draft reply grounded in the thread; nothing is sent. */
    suggestReply: (threadId: number, body: AiPromptOptions = {}) =>
      send<AiSuggestion>('POST', `/v1/threads/${id(threadId)}/ai/suggest-reply`, body),
    /** Stores a summary of the thread as a private note by the caller (`ai: true`) and answers it. */
    summarizeThread: (threadId: number, body: AiPromptOptions = {}) =>
      send<Message>('POST', `/v1/threads/${id(threadId)}/ai/summarize`, body),
    /** The text rewritten: shorter, friendlier, formal, fixed, or translated. */
    rewrite: (body: AiRewriteRequest) => send<{ text: string }>('POST', '/v1/ai/rewrite', body),

    // ---- contacts ----
    /** `q`: a case-insensitive substring of a name, an e-mail or a handle. */
    contacts: (query: ListQuery & { q?: string } = {}) => client.all<Contact>('/v1/contacts', { ...query }),
    contact: (contactId: number) => get<Contact>(`/v1/contacts/${id(contactId)}`),
    updateContact: (contactId: number, patch: ContactPatch) => send<Contact>('PATCH', `/v1/contacts/${id(contactId)}`, patch),
    /** Merges `body.contactId` into `contactId` and deletes it; answers the contact that stays. */
    mergeContact: (contactId: number, body: ContactMerge) => send<Contact>('POST', `/v1/contacts/${id(contactId)}/merge`, body),

    // ---- canned responses ----
    cannedResponses: (query: ListQuery = {}) => client.all<CannedResponse>('/v1/canned-responses', { ...query }),
    createCannedResponse: (body: CannedResponseCreate) => send<CannedResponse>('POST', '/v1/canned-responses', body),
    updateCannedResponse: (cannedResponseId: number, patch: CannedResponsePatch) =>
      send<CannedResponse>('PATCH', `/v1/canned-responses/${id(cannedResponseId)}`, patch),
    deleteCannedResponse: (cannedResponseId: number) => remove(`/v1/canned-responses/${id(cannedResponseId)}`),

    // ---- SLA policies (an admin; docs/sla.md) ----
    slaPolicies: () => get<SlaPolicy[]>('/v1/sla-policies'),
    createSlaPolicy: (body: SlaPolicyCreate) => send<SlaPolicy>('POST', '/v1/sla-policies', body),
    updateSlaPolicy: (policyId: number, patch: SlaPolicyPatch) => send<SlaPolicy>('PATCH', `/v1/sla-policies/${id(policyId)}`, patch),
    deleteSlaPolicy: (policyId: number) => remove(`/v1/sla-policies/${id(policyId)}`),

    // ---- automation rules (an admin) and macros (docs/automation.md) ----
    automationRules: () => get<AutomationRule[]>('/v1/automation-rules'),
    createAutomationRule: (body: AutomationRuleCreate) => send<AutomationRule>('POST', '/v1/automation-rules', body),
    updateAutomationRule: (ruleId: number, patch: AutomationRulePatch) =>
      send<AutomationRule>('PATCH', `/v1/automation-rules/${id(ruleId)}`, patch),
    deleteAutomationRule: (ruleId: number) => remove(`/v1/automation-rules/${id(ruleId)}`),
    /** The shared macros and the caller's own, newest first, page after page. */
    macros: (query: ListQuery = {}) => client.all<Macro>('/v1/macros', { ...query }),
    createMacro: (body: MacroCreate) => send<Macro>('POST', '/v1/macros', body),
    updateMacro: (macroId: number, patch: MacroPatch) => send<Macro>('PATCH', `/v1/macros/${id(macroId)}`, patch),
    deleteMacro: (macroId: number) => remove(`/v1/macros/${id(macroId)}`),
    /** Runs a macro's actions in order in one transaction; answers the thread after them. */
    runMacro: (threadId: number, macroId: number) => send<Thread>('POST', `/v1/threads/${id(threadId)}/macros/${id(macroId)}/run`),
    // ---- reports (an admin; docs/reports.md) ----
    reports: {
      summary: (query: ReportRange & { groupBy?: ReportGroupBy }) => get<ReportSummary>('/v1/reports/summary', { ...query }),
      /** Every bucket from the one holding `from`, each starting at a local hour, midnight or Monday. */
      timeseries: (query: ReportRange & { metric: ReportMetric; interval?: ReportInterval }) =>
        get<ReportPoint[]>('/v1/reports/timeseries', { ...query }),
      /** Where the CSV of the range is streamed (send the same credential to read it). */
      csvUrl: (query: ReportRange) => {
        const search = Object.entries(query)
          .filter((e): e is [string, string] => e[1] !== undefined)
          .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
          .join('&');
        return `${options.baseUrl.replace(/\/+$/, '')}/v1/reports/conversations.csv?${search}`;
      },
      /** One page of the CSAT ratings received, newest first (follow `meta.nextCursor` for more). */
      csatResponses: (query: CsatResponseQuery = {}) => client.page<CsatResponse>('/v1/csat-responses', { ...query }),
    },

    // ---- the team (creating and changing users takes an admin) ----
    users: (query: ListQuery = {}) => client.all<TeamUser>('/v1/users', { ...query }),
    createUser: (body: TeamUserCreate) => send<TeamUser>('POST', '/v1/users', body),
    updateUser: (userId: number, patch: TeamUserPatch) => send<TeamUser>('PATCH', `/v1/users/${id(userId)}`, patch),
    /** One's own name or availability; the workspace hears `user.updated`. */
    updateMe: (patch: OwnUserPatch) => send<TeamUser>('PATCH', '/v1/users/me', patch),

    // ---- the workspace's settings (changing them takes an admin) ----
    workspace: () => get<WorkspaceSettings>('/v1/workspace'),
    updateWorkspace: (patch: WorkspaceSettingsPatch) => send<WorkspaceSettings>('PATCH', '/v1/workspace', patch),

    // ---- teams (changing them takes an admin; docs/teams.md) ----
    teams: (query: ListQuery = {}) => client.all<Team>('/v1/teams', { ...query }),
    team: (teamId: number) => get<Team>(`/v1/teams/${id(teamId)}`),
    createTeam: (body: TeamCreate) => send<Team>('POST', '/v1/teams', body),
    updateTeam: (teamId: number, patch: TeamPatch) => send<Team>('PATCH', `/v1/teams/${id(teamId)}`, patch),
    /** Replaces the team's members with `userIds` (users of the workspace only). */
    setTeamMembers: (teamId: number, body: TeamMembers) => send<Team>('PUT', `/v1/teams/${id(teamId)}/members`, body),
    /** Its threads and connections stay, with `teamId` null. */
    deleteTeam: (teamId: number) => remove(`/v1/teams/${id(teamId)}`),

    // ---- notifications: the signed-in user's own (docs/teams.md, "Mentions and notifications") ----
    /** Newest first; `unread: true` for the unread only. */
    notifications: ({ unread, ...query }: ListQuery & { unread?: boolean } = {}) =>
      client.all<Notification>('/v1/notifications', { ...query, unread: unread === undefined ? undefined : String(unread) }),
    readNotification: (notificationId: number) => send<Notification>('POST', `/v1/notifications/${id(notificationId)}/read`),
    readAllNotifications: () => send<{ read: number }>('POST', '/v1/notifications/read-all'),
    /** How many threads each view (mine, unassigned, all) holds under the list's other filters. */
    threadCounts: ({ status, priority, ...query }: ThreadCountsQuery = {}) =>
      get<ThreadCounts>('/v1/threads/counts', {
        ...query,
        status: Array.isArray(status) ? status.join(',') : status,
        priority: Array.isArray(priority) ? priority.join(',') : priority,
      }),
    /** Tells the workspace's sockets you are looking at (or typing in) the thread: `thread.viewing`. */
    viewing: (threadId: number, body: ThreadViewing = {}) => send<Viewing>('POST', `/v1/threads/${id(threadId)}/viewing`, body),

    // ---- connections ----
    connections: (query: ListQuery = {}) => client.all<Connection>('/v1/connections', { ...query }),
    connection: (connectionId: number) => get<Connection>(`/v1/connections/${id(connectionId)}`),
    /** Connects a channel account to the caller's workspace (an admin); credentials are write-only. */
    createConnection: (body: ConnectionCreate) => send<Connection>('POST', '/v1/connections', body),
    updateConnection: (connectionId: number, patch: ConnectionPatch) =>
      send<Connection>('PATCH', `/v1/connections/${id(connectionId)}`, patch),
    /** Starts a template sync (202); poll the connection's `templatesSync` for its outcome. */
    syncTemplates: (connectionId: number) => send<Connection>('POST', `/v1/connections/${id(connectionId)}/templates/sync`),
    templates: (connectionId: number) => get<WhatsappTemplate[]>(`/v1/connections/${id(connectionId)}/templates`),
    /** The provider's cheapest authenticated read with the connection's credentials; stores nothing. */
    checkConnection: (connectionId: number) => send<ConnectionCheck>('POST', `/v1/connections/${id(connectionId)}/check`),
    /** Telegram: `setWebhook` with a fresh secret, so the bot's updates come here. */
    connectTelegramWebhook: (connectionId: number) =>
      send<{ connectionId: number; url: string }>('POST', `/v1/connections/${id(connectionId)}/telegram/webhook`, {}),
    /** Its URL answers 404 from then on; its threads stay, read-only. */
    deleteConnection: (connectionId: number) => remove(`/v1/connections/${id(connectionId)}`),

    // ---- API keys ----
    apiKeys: (query: ListQuery = {}) => client.all<ApiKey>('/v1/api-keys', { ...query }),
    createApiKey: (body: ApiKeyCreate) => send<IssuedApiKey>('POST', '/v1/api-keys', body),
    rotateApiKey: (keyId: number) => send<IssuedApiKey>('POST', `/v1/api-keys/${id(keyId)}/rotate`),
    revokeApiKey: (keyId: number) => remove(`/v1/api-keys/${id(keyId)}`),

    // ---- outbound webhook endpoints ----
    webhookEndpoints: (query: ListQuery = {}) => client.all<WebhookEndpoint>('/v1/webhook-endpoints', { ...query }),
    webhookEndpoint: (endpointId: number) => get<WebhookEndpoint>(`/v1/webhook-endpoints/${id(endpointId)}`),
    createWebhookEndpoint: (body: WebhookEndpointCreate) => send<WebhookEndpointWithSecret>('POST', '/v1/webhook-endpoints', body),
    updateWebhookEndpoint: (endpointId: number, patch: WebhookEndpointPatch) =>
      send<WebhookEndpoint>('PATCH', `/v1/webhook-endpoints/${id(endpointId)}`, patch),
    deleteWebhookEndpoint: (endpointId: number) => remove(`/v1/webhook-endpoints/${id(endpointId)}`),
    /** A new secret, answered once; the old one signs beside it for `graceSeconds` (default 24 h). */
    rotateWebhookSecret: (endpointId: number, opts: { graceSeconds?: number } = {}) =>
      send<WebhookEndpointWithSecret>('POST', `/v1/webhook-endpoints/${id(endpointId)}/rotate-secret`, undefined, undefined, {
        graceSeconds: opts.graceSeconds,
      }),
    testWebhookEndpoint: (endpointId: number) => send<WebhookDelivery>('POST', `/v1/webhook-endpoints/${id(endpointId)}/test`),
    webhookDeliveries: (endpointId: number, query: ListQuery & { status?: WebhookDelivery['status'] } = {}) =>
      client.all<WebhookDelivery>(`/v1/webhook-endpoints/${id(endpointId)}/deliveries`, { ...query }),
    redeliver: (deliveryId: number) => send<WebhookDelivery>('POST', `/v1/webhook-endpoints/deliveries/${id(deliveryId)}/redeliver`),

    /**
     * One page of the workspace's event log (admins), oldest first: every event its outbound
     * webhooks carry, with the same ids and bodies. Pass `meta.nextCursor` back as `after`; an
     * empty page has none and means nothing new yet: keep the cursor and ask again later.
     * `types`: event types, as a list or a comma list; none: every type.
     */
    events: (query: EventLogQuery = {}) =>
      client.page<WebhookEvent>('/v1/events', {
        after: query.after,
        types: typeof query.types === 'string' ? query.types : query.types?.join(','),
        limit: query.limit,
      }),

    // ---- dead letters (the app's own provider deliveries) ----
    /** One list, not paged: `status` defaults to `dead_letter`, `limit` to 100. */
    /** One page of the audit log, newest first (admins); pass `meta.nextCursor` back for older entries. */
    auditLog: (query: AuditLogQuery = {}) => client.page<AuditEntry>('/v1/audit-log', { ...query }),
    deadLetters: (query: { status?: InboxStatus; limit?: number } = {}) => get<WebhookInboxRow[]>('/v1/admin/webhook-inbox', { ...query }),
    deadLetter: (rowId: string) => get<WebhookInboxRecord>(`/v1/admin/webhook-inbox/${id(rowId)}`),
    /** Answers the status the row had before it was queued again. */
    requeueDeadLetter: (rowId: string, opts: IdempotencyOptions = {}) =>
      send<RequeueResult>('POST', `/v1/admin/webhook-inbox/${id(rowId)}/requeue`, undefined, { 'idempotency-key': opts.idempotencyKey }),

    // ---- personal-access tokens (a signed-in user's) ----
    personalAccessTokens: (query: ListQuery = {}) => client.all<PersonalAccessToken>('/v1/personal-access-tokens', { ...query }),
    createPersonalAccessToken: (body: PersonalAccessTokenCreate) =>
      send<IssuedPersonalAccessToken>('POST', '/v1/personal-access-tokens', body),
    revokePersonalAccessToken: (tokenId: number) => remove(`/v1/personal-access-tokens/${id(tokenId)}`),
  };
  return client;
}

export type TenantClient = ReturnType<typeof tenantClient>;
