/**
 * The shapes the typed client reads and writes, as plain TypeScript. This module imports
 * nothing, so the client's emitted declarations stand alone: a program that installs the
 * package compiles against them without the server's own packages (kysely, fastify, pg) and
 * without `skipLibCheck`. test/client/client-types.test.ts proves each one equal to the
 * server's TypeBox schema, so they cannot drift apart silently.
 */

export type Timestamp = string;

export type ThreadStatus = 'open' | 'pending' | 'resolved' | 'snoozed';

export interface Thread {
  id: number;
  connectionId: number;
  integrationKey: string;
  contactId: number;
  /** The contact's name; null while the contact has none (their handle is shown instead). */
  contactName: string | null;
  status: ThreadStatus;
  /** When a snoozed thread opens again; null unless snoozed. */
  snoozedUntil: Timestamp | null;
  /** The user working the thread. */
  assigneeId: number | null;
  /** The team the thread belongs to (docs/teams.md); null = none. */
  teamId: number | null;
  labels: string[];
  /** How urgent the thread is; SLA policies may match it. */
  priority: ThreadPriority;
  /** The SLA of the thread's current opening; null without a policy (docs/sla.md). */
  sla: ThreadSla | null;
  /** Inbound messages that arrived since `agentLastSeenAt`. */
  unreadCount: number;
  /** When an agent last read the thread (`markThreadRead`). */
  agentLastSeenAt: Timestamp | null;
  lastMessageAt: Timestamp;
  lastMessagePreview: string | null;
  /**
   * Until when a free-form reply is accepted: the contact's last message + 24 h (WhatsApp
   * Cloud) or 7 days (Messenger/Instagram); null for channels without a window.
   */
  replyWindowEndsAt: Timestamp | null;
  createdAt: Timestamp;
}

export type ThreadPriority = 'low' | 'normal' | 'high' | 'urgent';
export type SlaTarget = 'firstResponse' | 'nextResponse' | 'resolution';

/** A thread's SLA clocks: each due time is null once met, or when the policy sets no such target. */
export interface ThreadSla {
  policyId: number;
  firstResponseDueAt: Timestamp | null;
  /** Running from a contact message that follows a reply. */
  nextResponseDueAt: Timestamp | null;
  resolutionDueAt: Timestamp | null;
  status: 'ok' | 'warning' | 'breached';
  breaches: { target: SlaTarget; dueAt: Timestamp; breachedAt: Timestamp }[];
}

/** `PATCH /v1/threads/:id`: at least one field (docs/conversations.md). */
export interface ThreadPatch {
  /** `snoozed` needs a future `snoozedUntil`. */
  status?: ThreadStatus;
  /** A user of the workspace; null unassigns. */
  assigneeId?: number | null;
  /** When a snoozed thread opens again; in the future. */
  snoozedUntil?: Timestamp | null;
  /** A team of the workspace; null takes the thread out of its team. */
  teamId?: number | null;
  /** The whole set: at most 20, each 1–50 of a-z 0-9 - _ : (lower-cased by the service). */
  labels?: string[];
  /** SLA policies may match it (docs/sla.md). */
  priority?: ThreadPriority;
}

/** `GET /v1/threads` filters; absent ones do not filter, given ones combine. */
export interface ThreadFilters {
  /** One status, or several (sent as a comma list); absent: every status. */
  status?: ThreadStatus | ThreadStatus[];
  /** A user's id, `me` (the signed-in user; not for API keys) or `none` (unassigned). */
  assigneeId?: number | 'me' | 'none';
  connectionId?: number;
  contactId?: number;
  /** One label, matched lower-cased. */
  label?: string;
  /** A team's id, or `none` (threads of no team). */
  teamId?: number | 'none';
  /** One priority, or several (sent as a comma list). */
  priority?: ThreadPriority | ThreadPriority[];
  /** Only threads whose SLA has this status (docs/sla.md). */
  slaStatus?: 'ok' | 'warning' | 'breached';
  /** `sla`: the nearest SLA due time first, only threads with a clock running. */
  sort?: 'sla';
}

/** `GET /v1/threads/counts` filters: the list's, but for the assignee, which each count is about. */
export type ThreadCountsQuery = Omit<ThreadFilters, 'assigneeId'>;

/** `GET /v1/threads/counts`: the threads of each view of the list, under the same filters. */
export interface ThreadCounts {
  /** Assigned to the caller; null for an API key, which is nobody. */
  mine: number | null;
  unassigned: number;
  all: number;
}

/** `GET /v1/labels`: a label used on the workspace's threads. */
export interface Label {
  name: string;
  /** Open threads carrying the label. */
  openThreads: number;
}

/** `POST /v1/threads/:id/block-visitor`: how many visitor tokens of the thread ended now. */
export interface VisitorBlocked {
  threadId: number;
  /** 0 when they had already ended. */
  visitorsBlocked: number;
}

export interface MailAddress {
  email: string;
  name?: string;
}

export interface EmailHeaders {
  messageId: string;
  inReplyTo: string | null;
  from: MailAddress;
  to: MailAddress[];
  cc: MailAddress[];
  /** Outbound only. */
  bcc?: MailAddress[];
  subject: string | null;
}

/** `POST /v1/messages/:id/html-link`: add `&images=1` to let remote images load. */
export interface HtmlLink {
  url: string;
  expiresAt: Timestamp;
}

export type MessageStatus = 'received' | 'queued' | 'sent' | 'delivered' | 'read' | 'failed';

export interface Message {
  id: number;
  threadId: number;
  direction: 'inbound' | 'outbound';
  /** The provider's message id; null until a reply is sent. */
  externalId: string | null;
  text: string;
  status: MessageStatus;
  error: string | null;
  /** `note`: written by an agent for colleagues; `activity`: written by the service. */
  kind: 'message' | 'note' | 'activity';
  /** true for notes and activity: never sent to the contact. */
  private: boolean;
  /** The user who wrote or caused it; null for contacts and API keys. */
  authorId: number | null;
  /** Present on a note the workspace's model wrote (a summary, docs/ai.md). */
  ai?: true;
  /** Present on a reply or note the service wrote on its own: an automation rule, an away message, a CSAT survey. */
  automation?: true;
  /** Notes only: the users the note names, each told by a `mentioned` notification. */
  mentions?: number[];
  /** E-mail only: the headers a reader of the mail sees. */
  email?: EmailHeaders;
  /**
   * E-mail only: the HTML part, sanitized (an allowlist; no script; remote images as
   * `data-remote-src`, shown only on the agent's click; links rel=noopener).
   */
  html?: string | null;
  /** E-mail only: the quoted history and signature cut from `text`. */
  quotedText?: string | null;
  /** Files the message carries, in the order they were added. */
  attachments: Attachment[];
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export type AttachmentKind = 'image' | 'audio' | 'video' | 'sticker' | 'file';

/** What the client needs of a Blob or File (browsers' and Node 20's fit) to upload it. */
export interface BlobLike {
  readonly type?: string;
  arrayBuffer(): Promise<ArrayBuffer>;
}

/** A file on a message, or an upload no message has used yet (docs/attachments.md). */
export interface Attachment {
  id: number;
  /** The message carrying it; null for an upload no message has used yet. */
  messageId: number | null;
  kind: AttachmentKind;
  /** The type read from the bytes (the declared one only when the bytes do not say). */
  contentType: string;
  filename: string | null;
  /** Bytes; null until stored. */
  size: number | null;
  /** `pending`: still being fetched from the provider; `failed`: see `error`. */
  status: 'pending' | 'stored' | 'failed';
  error: string | null;
  /** `GET /v1/attachments/:id/content` (a signed link for live chat visitors). */
  url: string;
}

export interface Contact {
  id: number;
  name: string | null;
  email: string | null;
  phone: string | null;
  /** A flat object of string, number and boolean values. */
  attributes: Record<string, string | number | boolean>;
  handles: { integrationKey: string; externalId: string }[];
  createdAt: Timestamp;
}

/** `PATCH /v1/contacts/:id`: `null` clears a field; `attributes` replaces the whole object. */
export interface ContactPatch {
  name?: string | null;
  email?: string | null;
  /** Digits with an optional leading `+`. */
  phone?: string | null;
  /** At most 50 keys and 4096 bytes as JSON. */
  attributes?: Record<string, string | number | boolean>;
}

/** `POST /v1/contacts/:id/merge`: the contact merged into this one, then deleted. */
export interface ContactMerge {
  contactId: number;
}

/** Live chat: the fields the widget requires before the first message; they go on the contact. */
export interface PreChatForm {
  name: boolean;
  email: boolean;
}

export interface Connection {
  id: number;
  integrationKey: string;
  externalAccountId: string;
  name: string;
  /** Whether credentials are set; their values are never returned. */
  hasCredentials: boolean;
  /** Live chat connections only: origins allowed to call the visitor routes; empty = any. */
  allowedOrigins?: string[];
  /** Live chat only: the widget's heading; null = the widget's default. */
  title?: string | null;
  /** Live chat only: the widget's accent colour, #rrggbb; null = the widget's default. */
  colour?: string | null;
  /** Live chat only: what the widget shows before the first message; null = its default. */
  greeting?: string | null;
  /** Live chat only: the fields the widget requires before the first message. */
  preChatForm?: PreChatForm;
  /** email.imap only: the folder read. */
  imapFolder?: string;
  /** New and reopened threads go to the agent with the fewest open assigned threads. */
  autoAssign: boolean;
  /** WhatsApp Cloud: the WABA id whose templates are synced; null when unset. */
  businessAccountId: string | null;
  /** The last template sync; null before the first (docs/replies.md, "Templates"). */
  templatesSync: { status: 'running' | 'succeeded' | 'failed'; at: Timestamp; error: string | null } | null;
  /**
   * Who made it: `operator` (engage route, CLI) may fall back on the deployment's provider
   * credentials; `workspace` (`createConnection`) sends only with its own.
   */
  managedBy: 'operator' | 'workspace';
  /** The team new threads on the connection start in; null = none. */
  teamId: number | null;
  /** The URL to paste into the provider's console; null for livechat, ai and email.imap. */
  webhookUrl: string | null;
  /** Whether webhook secrets of its own are set; their values are never returned. */
  hasWebhookSecrets: boolean;
  /** Meta keys, to admins only: the verify token to paste into Meta's webhook settings. */
  webhookVerifyToken?: string;
  /** Health: the last delivery applied, the last failure (a delivery or a send) and when. */
  lastDeliveryAt: Timestamp | null;
  lastErrorAt: Timestamp | null;
  lastError: string | null;
  /** Answers a contact whose message opens a thread outside business hours, once per 12 h; null = off. */
  awayMessage: string | null;
  /** The survey after a user resolves a conversation that had a reply (docs/reports.md, "CSAT"). */
  csat: CsatSetting;
  createdAt: Timestamp;
}

/** A connection's CSAT survey: on or off, and its question (null = the default). */
export interface CsatSetting {
  enabled: boolean;
  question: string | null;
}

/** `csat` on create and PATCH: `question` left out keeps the one set; null returns to the default. */
export interface CsatSettingInput {
  enabled: boolean;
  question?: string | null;
}

/** `POST /v1/connections/:id/check`: whether the provider took the credentials, in words. */
export interface ConnectionCheck {
  ok: boolean;
  message: string;
}

/** A synced WhatsApp template, Meta's values as they come. */
export interface WhatsappTemplate {
  name: string;
  language: string;
  category: string;
  status: string;
  components: unknown[];
  /** How many {{n}} the body has. */
  parameterCount: number;
}

/** A template reply: the parameters fill the header's and the body's {{n}} in order. */
export interface TemplateReply {
  name: string;
  language: string;
  /** May be left out, as may either list, for a template without placeholders. */
  parameters?: { header?: string[]; body?: string[] };
}

/** Write-only provider credentials of a connection; fields by integration (docs/connections.md). */
export interface ConnectionCredentials {
  accessToken?: string;
  accountSid?: string;
  smtpUrl?: string;
  /** email.imap: the mailbox's IMAP server (imaps://host:993), and the login of both servers. */
  imapUrl?: string;
  username?: string;
  password?: string;
}

/**
 * Write-only webhook verification settings of a connection, named as INBOX_INTEGRATIONS names
 * them for its integration key (docs/connections.md).
 */
export interface WebhookSecrets {
  appSecret?: string;
  webhookSecret?: string;
  providerReportSecret?: string;
  authToken?: string;
  webhookVerifyToken?: string;
}

/** `PATCH /v1/connections/:id`: at least one field. `credentials: null` removes them. */
export interface ConnectionPatch {
  name?: string;
  credentials?: ConnectionCredentials | null;
  /** Replace the webhook secrets whole; null removes them. */
  webhookSecrets?: WebhookSecrets | null;
  allowedOrigins?: string[];
  /** Live chat: the widget's heading, colour (#rrggbb) and greeting; null = the default. */
  title?: string | null;
  colour?: string | null;
  greeting?: string | null;
  preChatForm?: PreChatForm;
  /** Assign new and reopened threads automatically (docs/conversations.md). */
  autoAssign?: boolean;
  /** WhatsApp Cloud: the WABA id; null removes it. */
  businessAccountId?: string | null;
  /** A team of the workspace new threads start in; null: none. */
  teamId?: number | null;
  /** Sent outside business hours (docs/sla.md); null turns it off. */
  awayMessage?: string | null;
  /** email.imap: the folder read; null = INBOX. */
  imapFolder?: string | null;
  csat?: CsatSettingInput;
}

/**
 * `POST /v1/connections` (a workspace admin) and `POST /v1/engage/workspaces/:id/connections`
 * (the admin key): `externalAccountId` is required except for livechat, whose widget key is
 * generated when absent.
 */
export interface ConnectionCreate {
  integrationKey: string;
  externalAccountId?: string;
  name: string;
  credentials?: ConnectionCredentials;
  webhookSecrets?: WebhookSecrets;
  allowedOrigins?: string[];
  /** Live chat: the widget's heading, colour (#rrggbb), greeting and pre-chat form. */
  title?: string;
  colour?: string;
  greeting?: string;
  preChatForm?: PreChatForm;
  autoAssign?: boolean;
  businessAccountId?: string;
  /** A team of the workspace new threads start in. */
  teamId?: number | null;
  /** Answers a contact writing outside business hours, once per thread per 12 h; null = off. */
  awayMessage?: string | null;
  /** email.imap: the folder read (default INBOX). */
  imapFolder?: string;
  csat?: CsatSettingInput;
}

export type ApiKeyScope = 'admin' | 'read' | 'write';

export interface ApiKey {
  id: number;
  name: string;
  scopes: string[];
  /** The first characters of the key, to recognise it. */
  prefix: string;
  createdAt: Timestamp;
  lastUsedAt: Timestamp | null;
}

/** A key as created or rotated: the plain `key` is in this answer only. */
export interface IssuedApiKey extends ApiKey {
  key: string;
}

export interface ApiKeyCreate {
  name: string;
  scopes?: ApiKeyScope[];
}

export interface PersonalAccessToken {
  id: number;
  name: string;
  prefix: string;
  createdAt: Timestamp;
  expiresAt: Timestamp;
  lastUsedAt: Timestamp | null;
}

/** A token as created: the plain `token` is in this answer only. */
export interface IssuedPersonalAccessToken extends PersonalAccessToken {
  token: string;
}

export interface PersonalAccessTokenCreate {
  name: string;
  /** 1 to 365; 90 when absent. */
  expiresInDays?: number;
}

export interface Workspace {
  id: number;
  name: string;
  appId: string;
  createdAt: Timestamp;
}

/** The `/api/user` routes keep the contract's snake_case. */
export interface User {
  id: number;
  name: string;
  email: string;
  workspaces_id: number;
  roles: string[];
}

export interface LoginRequest {
  email: string;
  password: string;
  remember: boolean;
  /** With two-factor sign-in on: a current code or a recovery code (without it → 401 `otp_required`). */
  otp?: string;
}

/** What a DELETE answers: the id of what is gone. */
export interface Deleted {
  id: number;
  deleted: true;
}

/** `POST /v1/threads/:id/viewing`: the `thread.viewing` event it announced. */
export interface Viewing {
  threadId: number;
  userId: number;
  typing: boolean;
}

/** `GET /v1/users/me/2fa`. */
export interface TwoFactorStatus {
  enabled: boolean;
  /** Unused recovery codes; 0 while two-factor sign-in is off. */
  recoveryCodesLeft: number;
}
/** `POST /v1/users/me/2fa/setup`: a new secret; nothing is on until `enable`. */
export interface TwoFactorSetup {
  /** Base32, for typing into an authenticator app. */
  secret: string;
  /** The same as an `otpauth://totp/` address, for a QR code. */
  otpauthUrl: string;
}
/** `GET /v1/audit-log` (admins) and `GET /v1/operator/audit-log`: who did what (docs/security.md). */
export interface AuditEntry {
  id: number;
  at: string;
  actor: { type: 'user' | 'api_key' | 'operator' | 'system'; id: number | null; name: string | null };
  /** E.g. `sign_in.succeeded`, `user.updated`, `api_key.created`. */
  action: string;
  target: { type: string; id: number | string } | null;
  ip: string | null;
  /** Field → `{old, new}`; a secret shows `"[set]"`, never its value. */
  changes: Record<string, unknown> | null;
}
/** The audit log's filters; they combine. `from`/`to` are ISO 8601 times (`to` excluded). */
/** `GET /v1/events`: where to start (`meta.nextCursor` of the last page read) and which types. */
export interface EventLogQuery {
  after?: string;
  types?: string | readonly string[];
  limit?: number;
}

export interface AuditLogQuery {
  /** A user's id; with `actorType: 'api_key'`, an API key's. */
  actorId?: number;
  actorType?: AuditEntry['actor']['type'];
  action?: string;
  from?: string;
  to?: string;
  limit?: number;
  cursor?: string;
}

/** `POST /v1/users/me/2fa/enable`: 10 recovery codes, each good once, shown only here. */
export interface TwoFactorEnabled {
  recoveryCodes: string[];
}

/** Login, refresh and generate-token answer this shape. */
export interface LoginResponse {
  data: User;
  /** JWT bearer token. */
  access_token: string;
  /** Unix seconds. */
  token_expiry: number;
  /** One-time code native apps exchange through generate-token. */
  auth_code: string;
  meta: { requestId: string };
}

export interface AuthCode {
  auth_code: string;
  /** Seconds. */
  expires_in: number;
}

export type TeamUserRole = 'admin' | 'operator' | 'agent';

/** A member of the team (`/v1/users`), camelCase unlike the `/api/user` routes. */
export interface TeamUser {
  id: number;
  name: string;
  email: string;
  roles: TeamUserRole[];
  /** false: deactivated, cannot sign in. */
  active: boolean;
  /** Invited by e-mail and not signed up yet (inactive until they choose a password). */
  invited: boolean;
  /** When an invited user's link stops working (inviting again mails a new one); null for anyone else. */
  inviteExpiresAt: string | null;
  /** The user's status; routing gives threads only to `online` users. */
  availability: UserAvailability;
  /** Open assigned threads routing stops at; null = no cap. */
  maxOpenThreads: number | null;
  /** One of the user's realtime sockets is open, on any api process. */
  connected: boolean;
  /** Only on your own user: which notifications are e-mailed while you have no socket open. */
  notify?: { email: NotifyEmail };
  createdAt: Timestamp;
}

/** Notifications e-mailed while none of the user's sockets is open (at most one mail per 5 minutes). */
export interface NotifyEmail {
  assigned: boolean;
  mentioned: boolean;
  /** `sla_warning` and `sla_breached`. */
  sla: boolean;
}

export type UserAvailability = 'online' | 'busy' | 'offline';

/** `PATCH /v1/users/me`: one's own name, availability (going `online` routes waiting threads) and mail settings. */
export interface OwnUserPatch {
  name?: string;
  availability?: UserAvailability;
  /** The fields left out keep their value. */
  notify?: { email?: Partial<NotifyEmail> };
}

/** `POST /v1/users/me/password` (docs/accounts.md). */
export interface PasswordChange {
  currentPassword: string;
  /** At least 12 characters, not the account's e-mail. */
  newPassword: string;
}
export interface PasswordChanged {
  /** The other sessions that ended. */
  endedSessions: number;
}
export interface PasswordReset {
  email: string;
}
export interface PasswordResetAccepted {
  message: string;
}
export interface PasswordResetConfirm {
  /** The `token` of the link's fragment. */
  token: string;
  newPassword: string;
}
export interface InviteAccept {
  token: string;
  password: string;
}
export interface SetupStatus {
  /** True while no workspace exists: the first-run setup link works. */
  open: boolean;
}
export interface SetupRequest {
  token: string;
  workspaceName: string;
  name: string;
  email: string;
  password: string;
}
export interface SetupResult {
  workspace: Workspace;
  user: User;
}

export interface TeamUserCreate {
  name: string;
  /** Sign-in e-mail, unique across the service. */
  email: string;
  /** At least 8 characters; without it the user is invited by e-mail to choose their own. */
  password?: string;
  roles?: TeamUserRole[];
}

/** `PATCH /v1/users/:id`; `active: false` ends the user's sessions, tokens and sockets at once. */
export interface TeamUserPatch {
  name?: string;
  roles?: TeamUserRole[];
  active?: boolean;
  /** Open assigned threads routing stops at; null = no cap. */
  maxOpenThreads?: number | null;
}

/** A saved reply agents insert by short code. */
export interface CannedResponse {
  id: number;
  /** 1–40 of a-z 0-9 - _, unique in the workspace. */
  shortCode: string;
  content: string;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface CannedResponseCreate {
  shortCode: string;
  /** 1 to 4096 characters. */
  content: string;
}

export interface CannedResponsePatch {
  shortCode?: string;
  content?: string;
}

export type InboxStatus = 'received' | 'processed' | 'failed' | 'dead_letter';

/** A WebhookInbox row in a list: every field but its body. */
export interface WebhookInboxRow {
  id: string;
  integrationKey: string;
  appId: string | null;
  event: string | null;
  status: InboxStatus;
  verification: 'signed' | 'report_secret' | 'correlated' | 'skipped';
  attemptCount: number;
  nextRetryAt: Timestamp | null;
  lastError: string | null;
  processedAt: Timestamp | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** One WebhookInbox row with its body: the raw body verbatim and the parsed payload. */
export interface WebhookInboxRecord extends WebhookInboxRow {
  rawBody: string;
  payloadJson: unknown;
}

/** A requeue's answer: the row's status before the enqueue. */
export interface RequeueResult {
  id: string;
  status: InboxStatus;
}

export type WebhookEventFilter =
  | 'message.created'
  | 'message.updated'
  | 'thread.created'
  | 'thread.updated'
  | 'contact.created'
  | 'contact.updated'
  | 'contact.merged'
  | 'contact.erased'
  | 'sla.warning'
  | 'sla.breached'
  | 'csat.received'
  | 'webhook_inbox.dead_lettered'
  | '*';
export type SignatureScheme = 'service' | 'standard';

export interface WebhookEndpoint {
  id: number;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  signatureScheme: SignatureScheme;
  disabledReason: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** The create and rotate answers: the signing secret is shown only there. */
export interface WebhookEndpointWithSecret extends WebhookEndpoint {
  secret: string;
}

export interface WebhookEndpointCreate {
  url: string;
  description?: string;
  events?: WebhookEventFilter[];
  enabled?: boolean;
  signatureScheme?: SignatureScheme;
  /** Bring your own: `whsec_` and base64 of 24 to 64 bytes. */
  secret?: string;
}

export interface WebhookEndpointPatch {
  url?: string;
  description?: string;
  events?: WebhookEventFilter[];
  /** `true` re-enables an endpoint the service disabled. */
  enabled?: boolean;
  signatureScheme?: SignatureScheme;
}

export interface WebhookAttempt {
  attemptedAt: Timestamp;
  /** The receiver's HTTP status; null when there was no answer. */
  statusCode: number | null;
  durationMs: number;
  error: string | null;
}

export interface WebhookDelivery {
  /** The delivery id: `x-service-delivery` / `webhook-id`, the same on every attempt. */
  id: number;
  endpointId: number;
  eventId: string;
  eventType: string;
  status: 'pending' | 'succeeded' | 'failed';
  attempts: WebhookAttempt[];
  nextAttemptAt: Timestamp | null;
  createdAt: Timestamp;
}

export interface ReplyRequest {
  /** 1 to 4096 characters; never with `template`. With `attachmentIds`, their caption (or leave it out). */
  text?: string;
  /**
   * Uploads to send (1 to 10 ids of stored attachments on no message yet). WhatsApp, Messenger,
   * Instagram, WAHA, SMS and Telegram take one; e-mail and live chat several; others none (422).
   */
  attachmentIds?: number[];
  /** WhatsApp Cloud: a synced, APPROVED template, sent alone. */
  template?: TemplateReply;
  /** true: a private note for colleagues, stored and never sent (answered 201). */
  private?: boolean;
  /** Notes only (`private: true`): users of the workspace to tell (1 to 50 ids, each a `mentioned` notification). */
  mentions?: number[];
  /** E-mail threads only: the Cc (default: the last inbound mail's Cc); [] sends none. */
  cc?: string[];
  /** E-mail threads only: blind copies. */
  bcc?: string[];
  /** E-mail threads only (default: `Re: ` and the thread's subject). */
  subject?: string;
}

/** `POST /v1/conversations`: the business speaks first (docs/replies.md, "Starting a conversation"). */
export interface StartConversationRequest {
  connectionId: number;
  /** A phone number in E.164, a WhatsApp id or WAHA chat id, or an e-mail address; stored normalised. */
  to: string;
  /** The contact's name, kept when the contact has none yet. */
  name?: string;
  /**
   * `text`, `template`, or `attachmentIds` (with `text` as their caption, or alone); a template
   * goes alone (WhatsApp Cloud free text needs an open reply window).
   */
  text?: string;
  template?: TemplateReply;
  /** Uploads (`attachments.upload`) to send with the first message. */
  attachmentIds?: number[];
}

/** The answer of `POST /v1/conversations` (202): the contact's thread and the queued message. */
export interface StartedConversation {
  thread: Thread;
  message: Message;
}

/** `GET /v1/messages/search`: `q` in web search syntax (`"a phrase"`, `or`, `-excluded`), 1–256 characters. */
export interface MessageSearch {
  q: string;
}

/** What an AI prompt of a thread may hold beyond its messages (docs/ai.md). */
export interface AiPromptOptions {
  /** Put the thread's private notes in the prompt too (people only; an API key gets 403). */
  includeNotes?: boolean;
}

/** `POST /v1/threads/:id/ai/suggest-reply`: a draft for the agent to edit; nothing was sent. */
export interface AiSuggestion {
  text: string;
  /** The messages of similar resolved threads the prompt held. */
  sources: number[];
}

/** How `POST /v1/ai/rewrite` changes a text. */
export type AiRewriteInstruction = 'shorter' | 'friendlier' | 'formal' | 'fix' | `translate:${string}`;

export interface AiRewriteRequest {
  /** 1 to 10 000 characters. */
  text: string;
  /** `translate:<language>` takes a language name of 2 to 40 characters. */
  instruction: AiRewriteInstruction;
}

/** A group of the workspace's users (docs/teams.md). */
export interface Team {
  id: number;
  /** 1–60 characters, unique in the workspace (whatever the case). */
  name: string;
  description: string | null;
  /** The users of the team, lowest id first. */
  memberIds: number[];
  /** Whether the team's threads are routed to its online members under their cap. */
  autoAssign: boolean;
  /** The team's own business hours, which win over the workspace's for its threads; null = the workspace's. */
  businessHours: BusinessHours | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** `POST /v1/teams` (an admin). */
export interface TeamCreate {
  name: string;
  description?: string | null;
  autoAssign?: boolean;
  businessHours?: BusinessHoursInput | null;
}

/** `PATCH /v1/teams/:id` (an admin): at least one field; `description: null` clears it. */
export interface TeamPatch {
  name?: string;
  description?: string | null;
  autoAssign?: boolean;
  businessHours?: BusinessHoursInput | null;
}

/** `PUT /v1/teams/:id/members` (an admin): the whole list, replacing the previous one. */
export interface TeamMembers {
  userIds: number[];
}

/**
 * When a workspace or team works (docs/sla.md): intervals of local time per weekday ("HH:MM";
 * an end may be "24:00"), in an IANA zone, and whole-day holidays ("YYYY-MM-DD").
 */
export interface BusinessHours {
  timezone: string;
  /** A weekday left out is closed. */
  weekly: Partial<Record<'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun', string[][]>>;
  holidays: string[];
}

/** Business hours as a request sets them: `holidays` may be left out (none). */
export interface BusinessHoursInput {
  timezone: string;
  weekly: BusinessHours['weekly'];
  holidays?: string[];
}

/** `GET /v1/workspace`: the caller's workspace and its settings (docs/teams.md). */
export interface WorkspaceSettings {
  id: number;
  name: string;
  /** The workspace's app (`app_…`): `auth.appId` of its users, `appId` of its inbox rows. */
  appId: string;
  createdAt: string;
  /** When business-hours SLA clocks run and away replies stay quiet; null = always open. */
  businessHours: BusinessHours | null;
  /** A user's reply on an unassigned thread assigns it to them. */
  assignOnReply: boolean;
  /** Users without the admin role see only their teams' threads, threads of no team, and their own. */
  restrictAgentsToTeams: boolean;
  /** A user without two-factor sign-in reaches only its setup (403 `2fa_required` elsewhere). */
  require2fa: boolean;
  /** Threads resolved and silent for longer than this many days are deleted; null = kept. */
  conversationRetentionDays: number | null;
  /** Single sign-on with OpenID Connect; null = off. The client secret is never answered. */
  sso: SsoSetting | null;
  /** AI assist on the workspace's own model (docs/ai.md). */
  ai: AiSettings;
}

/** A workspace's single sign-on (docs/security.md, "Single sign-on"). */
export interface SsoSetting {
  /** https; its discovery document is `<issuer>/.well-known/openid-configuration`. */
  issuer: string;
  clientId: string;
  /** E-mail domains that may sign in this way; a person not yet a user is created. */
  allowedDomains: string[];
  /** The roles of a user created at first sign-in. */
  defaultRoles: ('admin' | 'agent')[];
  /** Password sign-in is refused (401 `sso_required`), except admins with two-factor sign-in and platform operators. */
  enforce: boolean;
}

/** `sso` as `PATCH /v1/workspace` takes it: the whole setting; `clientSecret` left out keeps the one set. */
export interface SsoSettingPatch {
  issuer: string;
  clientId: string;
  clientSecret?: string;
  allowedDomains: string[];
  defaultRoles?: ('admin' | 'agent')[];
  enforce?: boolean;
}

/** The workspace's `ai` setting; the key is write-only. */
export interface AiSettings {
  /** Off by default; while off every AI route answers 409 `ai_disabled`. */
  enabled: boolean;
  /** Requests go to `<baseUrl>/chat/completions`. */
  baseUrl: string | null;
  model: string | null;
  /** Whether a key is stored (the key itself is never shown). */
  apiKeySet: boolean;
}

/** `PATCH /v1/workspace` (an admin): at least one field; the others keep their value. */
export interface WorkspaceSettingsPatch {
  name?: string;
  businessHours?: BusinessHoursInput | null;
  assignOnReply?: boolean;
  restrictAgentsToTeams?: boolean;
  require2fa?: boolean;
  conversationRetentionDays?: number | null;
  sso?: SsoSettingPatch | null;
  ai?: { enabled?: boolean; baseUrl?: string | null; model?: string | null; apiKey?: string | null };
}

export type NotificationType = 'assigned' | 'mentioned' | 'message' | 'sla_warning' | 'sla_breached';

/** `GET /v1/notifications`: something that needs the signed-in user (docs/teams.md, "Mentions and notifications"). */
export interface Notification {
  id: number;
  /**
   * `assigned`: someone else or routing assigned the thread to you; `mentioned`: a note names
   * you; `message`: a contact wrote in a thread assigned to you; `sla_warning`, `sla_breached`.
   */
  type: NotificationType;
  threadId: number | null;
  /** The message, note or activity line it is about. */
  messageId: number | null;
  /** The user who caused it; null for contacts, routing and API keys. */
  actorId: number | null;
  createdAt: Timestamp;
  /** null while unread. */
  readAt: Timestamp | null;
}

/** `POST /v1/threads/:id/viewing`: announced to the workspace as `thread.viewing {threadId, userId, typing}`. */
export interface ThreadViewing {
  /** true while you type a reply or note. */
  typing?: boolean;
}

/** An SLA policy (docs/sla.md): targets are ISO 8601 durations of at least `PT10S`. */
export interface SlaPolicy {
  id: number;
  name: string;
  /** The first enabled policy by position whose conditions match applies. */
  position: number;
  enabled: boolean;
  firstResponse: string | null;
  nextResponse: string | null;
  resolution: string | null;
  /** The clocks run only inside the thread's business hours. */
  businessHoursOnly: boolean;
  conditions: SlaConditions;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** Every condition given must match; none given matches every thread. */
export interface SlaConditions {
  priorities?: ThreadPriority[];
  connectionIds?: number[];
  teamIds?: number[];
  /** The thread carries at least one of them. */
  labels?: string[];
}

/** `POST /v1/sla-policies` (an admin): at least one target. */
export interface SlaPolicyCreate {
  name: string;
  position?: number;
  enabled?: boolean;
  firstResponse?: string | null;
  nextResponse?: string | null;
  resolution?: string | null;
  businessHoursOnly?: boolean;
  conditions?: SlaConditions;
}

/** `PATCH /v1/sla-policies/:id` (an admin): at least one field. */
export type SlaPolicyPatch = Partial<Omit<SlaPolicy, 'id' | 'createdAt' | 'updatedAt'>>;

/** What fires an automation rule (docs/automation.md). */
export type RuleEvent = 'message.created' | 'thread.created' | 'thread.updated' | 'thread.idle';
/** How a condition compares; no regular expressions. */
export type ConditionOp =
  | 'eq'
  | 'neq'
  | 'in'
  | 'not_in'
  | 'contains'
  | 'not_contains'
  | 'starts_with'
  | 'is_set'
  | 'is_not_set'
  | 'gt'
  | 'lt';
export type RuleScalar = string | number | boolean;

export interface RuleCondition {
  /**
   * text, connectionId, integrationKey, status, priority, labels, teamId, assigneeId,
   * contact.name, contact.email, contact.attributes.<key>, insideBusinessHours
   */
  field: string;
  op: ConditionOp;
  value?: RuleScalar | RuleScalar[];
}

/** What a rule or a macro does to a thread, each through the same code as the API. */
export type RuleAction =
  | { type: 'assign_user'; userId: number }
  | { type: 'assign_team'; teamId: number }
  /** Route the thread as availability routing does (docs/teams.md). */
  | { type: 'route' }
  | { type: 'add_labels'; labels: string[] }
  | { type: 'remove_labels'; labels: string[] }
  /** `snoozeMinutes`: with status snoozed, how long. */
  | { type: 'set_status'; status: ThreadStatus; snoozeMinutes?: number }
  | { type: 'set_priority'; priority: ThreadPriority }
  /** A reply to the contact: text (canned-response variables filled in) or a template. */
  | { type: 'reply'; text?: string; template?: TemplateReply }
  /** A private note. */
  | { type: 'note'; text: string };

/** An automation rule (an admin; docs/automation.md). */
export interface AutomationRule {
  id: number;
  name: string;
  enabled: boolean;
  /** Rules run in position order (then id). */
  position: number;
  event: RuleEvent;
  match: 'all' | 'any';
  conditions: RuleCondition[];
  actions: RuleAction[];
  /** thread.idle: minutes without a message. */
  idleMinutes: number | null;
  /** thread.idle: the statuses an idle thread may have. */
  statuses: ThreadStatus[] | null;
  /** Times its conditions matched and its actions ran. */
  runs: number;
  lastRunAt: Timestamp | null;
  /** What failed in the last run; null when every action applied. */
  lastError: string | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

/** `POST /v1/automation-rules`: a rule naming an unknown user, team or template → 422. */
export interface AutomationRuleCreate {
  name: string;
  event: RuleEvent;
  actions: RuleAction[];
  enabled?: boolean;
  position?: number;
  match?: 'all' | 'any';
  conditions?: RuleCondition[];
  idleMinutes?: number | null;
  statuses?: ThreadStatus[] | null;
}

/** `PATCH /v1/automation-rules/:id`: at least one field. */
export type AutomationRulePatch = Partial<Omit<AutomationRule, 'id' | 'runs' | 'lastRunAt' | 'lastError' | 'createdAt' | 'updatedAt'>>;

/** A macro: actions an agent runs on a thread at once (docs/automation.md). */
export interface Macro {
  id: number;
  name: string;
  actions: RuleAction[];
  /** false: only its author sees and runs it. */
  shared: boolean;
  authorId: number | null;
  createdAt: Timestamp;
  updatedAt: Timestamp;
}

export interface MacroCreate {
  name: string;
  actions: RuleAction[];
  shared?: boolean;
}

/** `PATCH /v1/macros/:id` (its author or an admin): at least one field. */
export type MacroPatch = Partial<Omit<Macro, 'id' | 'authorId' | 'createdAt' | 'updatedAt'>>;
/** A report's range (docs/reports.md): dates (whole days in `timezone`, `to` included) or instants with an offset. */
export interface ReportRange {
  from: string;
  to: string;
  /** An IANA zone; default the workspace's business hours' zone, else UTC. */
  timezone?: string;
}

export type ReportGroupBy = 'none' | 'agent' | 'team' | 'connection' | 'label';
export type ReportMetric = 'conversations' | 'resolved' | 'firstResponseMedian' | 'resolutionMedian' | 'messagesIn' | 'csatAverage';
export type ReportInterval = 'hour' | 'day' | 'week';

/** Exact median and p90 (linear interpolation) and the average; null without a value. */
export interface ReportStats {
  median: number | null;
  p90: number | null;
  average: number | null;
}

/** The figures of one group of `GET /v1/reports/summary`. */
export interface ReportGroup {
  /** null for `groupBy=none`; `id: null` = no agent, team or label. */
  group: { id: number | string | null; name: string | null } | null;
  /** Opened in the range. */
  conversations: number;
  /** Resolved in the range. */
  resolved: number;
  firstResponseSeconds: ReportStats;
  resolutionSeconds: ReportStats;
  business: { firstResponseSeconds: ReportStats; resolutionSeconds: ReportStats };
  messagesIn: number;
  messagesOut: number;
  slaBreaches: number;
  csat: { responses: number; average: number | null; satisfiedShare: number | null };
}

/** `GET /v1/reports/summary` (an admin). */
export interface ReportSummary {
  from: Timestamp;
  to: Timestamp;
  timezone: string;
  groupBy: ReportGroupBy;
  groups: ReportGroup[];
}

/** One bucket of `GET /v1/reports/timeseries`: 0 or null when empty. */
export interface ReportPoint {
  start: Timestamp;
  value: number | null;
}

/** A rating of `GET /v1/csat-responses` (an admin): newest first. */
export interface CsatResponse {
  conversationId: number;
  threadId: number;
  contactId: number;
  connectionId: number;
  /** The assignee and team at the resolution. */
  assigneeId: number | null;
  teamId: number | null;
  /** 1 to 5; 4 and 5 count as satisfied. */
  rating: number;
  comment: string | null;
  ratedAt: Timestamp;
  resolvedAt: Timestamp | null;
}

/** `GET /v1/csat-responses`: the bounds are each optional (`from` included, `to` excluded or a whole day). */
export type CsatResponseQuery = Partial<ReportRange> & {
  /** One or more of 1 to 5, comma-separated (`1,2`). */
  rating?: string;
  limit?: number;
  cursor?: string;
};
