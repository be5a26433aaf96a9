import type { ColumnType, Generated } from 'kysely';

/**
 * Hand-kept row types, one interface per table, kept in step with migrations/. API shapes are
 * the TypeBox schemas beside each feature's resource mappers, never these types.
 */
type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;

export interface WorkspacesTable {
  id: Generated<number>;
  name: string;
  app_id: string;
  /** The settings set so far (src/workspaces/workspace-settings.ts); an absent one has its default. */
  settings: ColumnType<Record<string, unknown>, string | undefined, string>;
  /** The `sso` setting's client secret, sealed (src/auth/sso.ts); never in `settings`. */
  sso_client_secret: Buffer | null;
  created_at: Generated<Date>;
}

/** A single sign-on between its start and the identity provider's callback (migration 0059). */
export interface SsoLoginsTable {
  state_hash: string;
  workspace_id: number;
  nonce: string;
  code_verifier: string;
  expires_at: Date;
}

export interface UsersTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  email: string;
  password_hash: string;
  roles: string[];
  /** False once an admin deactivates the user: no sign-in, every credential ended. */
  active: Generated<boolean>;
  created_at: Generated<Date>;
  /** The user's own status; routing gives threads only to `online` users (docs/teams.md). */
  availability: Generated<UserAvailability>;
  /** Open assigned threads routing stops at; null = no cap. */
  max_open_threads: number | null;
  /** When the user's last realtime socket went (null while one is open, or once set offline). */
  disconnected_at: NullableTimestamp;
  /** Which notifications are e-mailed while the user has no socket open (docs/teams.md). */
  notify_email_assigned: Generated<boolean>;
  notify_email_mentioned: Generated<boolean>;
  /** Both `sla_warning` and `sla_breached`. */
  notify_email_sla: Generated<boolean>;
  /** The TOTP secret, sealed (aad `user-totp:<id>`); set at setup, in force once `totp_enabled_at` is. */
  totp_secret: Buffer | null;
  totp_enabled_at: NullableTimestamp;
  /** The time step of the last TOTP code accepted: a code never works twice. */
  totp_last_step: number | null;
}

/** An entry of the audit log: append-only (the database refuses UPDATE and DELETE but retention's). */
export interface AuditLogTable {
  id: Generated<number>;
  /** Null for the platform operator's actions outside any workspace. */
  workspace_id: number | null;
  at: Generated<Date>;
  actor_type: 'user' | 'api_key' | 'operator' | 'system';
  actor_id: number | null;
  action: string;
  target_type: string | null;
  target_id: string | null;
  ip: string | null;
  changes: Record<string, unknown> | null;
}

/** A two-factor recovery code: only its SHA-256, each good once. */
export interface RecoveryCodesTable {
  id: Generated<number>;
  user_id: number;
  code_hash: string;
  used_at: NullableTimestamp;
}

export type UserAvailability = 'online' | 'busy' | 'offline';

/** An open realtime socket of a user on one api process, refreshed by that process's heartbeat. */
export interface UserSocketsTable {
  process_id: string;
  socket_id: string;
  user_id: number;
  workspace_id: number;
  /** Two heartbeats after the last one that saw the socket. */
  expires_at: Timestamp;
}

/** When a user was last given a thread: routing's tie-break. */
export interface UserAssignmentTimesTable {
  user_id: number;
  last_assigned_at: Timestamp;
}

export interface ApiKeysTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  scopes: string[];
  key_hash: string;
  key_prefix: string;
  created_at: Generated<Date>;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

/** Live chat: the fields a widget asks before the first message. */
export interface PreChatForm {
  name: boolean;
  email: boolean;
}

export interface ConnectionsTable {
  id: Generated<number>;
  workspace_id: number;
  integration_key: string;
  external_account_id: string;
  name: string;
  created_at: Generated<Date>;
  /** Sealed credentials (src/connections/connection-credentials.ts); never read elsewhere. */
  credentials_sealed: Buffer | null;
  /** Live chat: the web origins allowed to call the visitor routes; empty = any. */
  allowed_origins: Generated<string[]>;
  /** New and reopened threads go to the agent with the fewest open assigned threads. */
  auto_assign: Generated<boolean>;
  /** WhatsApp Cloud: the WhatsApp Business Account whose templates the connection sends. */
  business_account_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The last template sync: 'running', 'succeeded' or 'failed', when, and the failure. */
  templates_sync_status: ColumnType<string | null, string | null | undefined, string | null>;
  templates_sync_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  templates_sync_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** Who made it: only `operator` connections may use the INBOX_INTEGRATIONS credentials. */
  managed_by: ManagedBy;
  /** The team new threads on the connection start in; null = none. */
  team_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** The public part of its own webhook URL, `/webhooks/<integrationKey>/<connectionKey>`. */
  connection_key: string;
  /** Sealed webhook verification settings of its own (src/connections/webhook-secrets.ts). */
  webhook_secrets_sealed: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  /** Meta keys: the verify token of the subscription challenge, shown to admins. */
  webhook_verify_token: ColumnType<string | null, string | null | undefined, string | null>;
  /** Health: the last batch applied to it, the last failure and when. */
  last_delivery_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_error_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  /** Deleted: its URL answers 404, its threads stay, read-only. */
  deleted_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Answers a contact who writes outside business hours (docs/sla.md); null = off. */
  away_message: ColumnType<string | null, string | null | undefined, string | null>;
  /** Live chat: the widget's heading, accent (#rrggbb) and greeting; null = the widget's default. */
  livechat_title: ColumnType<string | null, string | null | undefined, string | null>;
  livechat_colour: ColumnType<string | null, string | null | undefined, string | null>;
  livechat_greeting: ColumnType<string | null, string | null | undefined, string | null>;
  /** Live chat: which fields the widget asks before the first message. */
  livechat_pre_chat: ColumnType<PreChatForm, PreChatForm | undefined, PreChatForm>;
  /** `email.imap`: the folder read; null = INBOX. */
  imap_folder: ColumnType<string | null, string | null | undefined, string | null>;
  /** CSAT (docs/reports.md): a user's resolution sends the survey; its question, null = the default. */
  csat_enabled: Generated<boolean>;
  csat_question: ColumnType<string | null, string | null | undefined, string | null>;
}

/** `email.imap`: where the reader of a mailbox goes on from (src/mailboxes). */
export interface ImapMailboxStateTable {
  connection_id: number;
  folder: string;
  uid_validity: number;
  last_uid: number;
  updated_at: Generated<Date>;
}

/** `email.imap`: every mail stored, once per connection and Message-ID, and per UID. */
export interface ImapMessagesTable {
  connection_id: number;
  message_key: string;
  folder: string;
  uid_validity: number;
  uid: number;
  delivery_id: string;
  created_at: Generated<Date>;
}

export type ManagedBy = 'operator' | 'workspace';

export type InboxStatus = 'received' | 'processed' | 'failed' | 'dead_letter';

export interface WebhookInboxTable {
  id: string;
  integration_key: string;
  app_id: string | null;
  event: string | null;
  raw_body: string;
  /** The body's exact bytes, only when raw_body cannot hold them and the integration posts binary parts. */
  raw_bytes: ColumnType<Buffer | null, Buffer | null | undefined, Buffer | null>;
  payload_json: ColumnType<unknown, string | null, string | null>;
  verification: ColumnType<
    'signed' | 'report_secret' | 'correlated' | 'skipped',
    'signed' | 'report_secret' | 'correlated' | 'skipped' | undefined
  >;
  /** The account the verification itself established (a Telegram secret names its bot). */
  verified_account: ColumnType<string | null, string | null | undefined, string | null>;
  status: ColumnType<InboxStatus, InboxStatus | undefined, InboxStatus>;
  attempt_count: Generated<number>;
  next_retry_at: NullableTimestamp;
  last_error: string | null;
  processed_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface IdempotencyKeysTable {
  app_id: string;
  key: string;
  request: string;
  status_code: number;
  response: ColumnType<unknown, string, string>;
  created_at: Generated<Date>;
}

export interface ContactsTable {
  id: Generated<number>;
  workspace_id: number;
  name: string | null;
  email: Generated<string | null>;
  phone: Generated<string | null>;
  /** A flat object of string, number and boolean values (src/contacts/contact-attributes.ts). */
  attributes: ColumnType<Record<string, string | number | boolean>, string | undefined, string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** Erased (docs/privacy.md): a tombstone, every field of the person cleared; no route shows it. */
  erased_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
}

export interface ContactHandlesTable {
  workspace_id: number;
  integration_key: string;
  external_id: string;
  contact_id: number;
}

export type ThreadStatus = 'open' | 'pending' | 'resolved' | 'snoozed';

export interface ThreadsTable {
  id: Generated<number>;
  workspace_id: number;
  connection_id: number;
  contact_id: number;
  status: Generated<ThreadStatus>;
  snoozed_until: NullableTimestamp;
  assignee_id: number | null;
  labels: Generated<string[]>;
  agent_last_seen_at: NullableTimestamp;
  /** Inbound messages that arrived since an agent last read the thread. */
  unread_count: Generated<number>;
  last_message_at: Generated<Date>;
  last_message_preview: string | null;
  /** The provider's timestamp of the contact's last inbound message: where a reply window starts. */
  last_inbound_at: Generated<Date | null>;
  /** The team the thread belongs to (docs/teams.md); null = none. */
  team_id: ColumnType<number | null, number | null | undefined, number | null>;
  /** '' but on e-mail, where it is the Message-ID that opened the conversation (docs/email.md). */
  conversation_key: Generated<string>;
  priority: ColumnType<ThreadPriority, ThreadPriority | undefined, ThreadPriority>;
  /** The SLA clock of the current opening (src/sla/sla-state.ts); null without a policy. */
  sla: ColumnType<unknown, string | null | undefined, string | null>;
  /** The nearest due time of the SLA targets still running: `?sort=sla`. */
  sla_due_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  sla_status: ColumnType<SlaStatus | null, SlaStatus | null | undefined, SlaStatus | null>;
  /** When the connection's away message last answered the thread. */
  away_replied_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** Messages of the current conversation (docs/reports.md), copied to it when it is resolved. */
  conversation_messages_in: Generated<number>;
  conversation_messages_out: Generated<number>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** One stretch of a thread from its opening to its resolution (docs/reports.md). */
export interface ConversationsTable {
  id: Generated<number>;
  workspace_id: number;
  thread_id: number;
  connection_id: number;
  reopened: Generated<boolean>;
  opened_at: Date;
  first_response_at: Date | null;
  first_response_seconds: number | null;
  first_response_business_seconds: number | null;
  resolved_at: Date | null;
  resolution_seconds: number | null;
  resolution_business_seconds: number | null;
  /** At resolution; while open, the thread's own are read. */
  assignee_id: number | null;
  team_id: number | null;
  labels: Generated<string[]>;
  priority: Generated<ThreadPriority>;
  /** Null while open: the thread counts them (conversation_messages_in/out). */
  messages_in: number | null;
  messages_out: number | null;
  sla_breaches: Generated<number>;
  /** The survey sent for it (docs/reports.md, "CSAT"): the hash of its link's token. */
  csat_token_hash: string | null;
  csat_sent_at: Date | null;
  csat_rating: number | null;
  csat_comment: string | null;
  csat_at: Date | null;
}

export type MessageStatus = 'received' | 'queued' | 'sent' | 'delivered' | 'read' | 'failed';

export type MessageKind = 'message' | 'note' | 'activity';

export type AttachmentKind = 'image' | 'audio' | 'video' | 'sticker' | 'file';
export type AttachmentStatus = 'pending' | 'stored' | 'failed';

export interface AttachmentsTable {
  id: Generated<number>;
  workspace_id: number;
  message_id: number | null;
  kind: AttachmentKind;
  content_type: Generated<string>;
  filename: string | null;
  size: number | null;
  status: AttachmentStatus;
  error: string | null;
  /** Where the bytes are in the configured storage; null until stored. */
  storage_key: string | null;
  /** Inbound: how the fetch-media job downloads it (provider, URL or media id, connection). */
  source: unknown | null;
  attempt_count: Generated<number>;
  /** A live chat upload: the visitor who made it (only they may send it). */
  uploaded_by_visitor: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface AttachmentChunksTable {
  storage_key: string;
  seq: number;
  data: Buffer;
}

export interface WhatsappTemplatesTable {
  connection_id: number;
  name: string;
  language: string;
  category: string;
  status: string;
  /** Meta's components as they came. */
  components: ColumnType<unknown, string, string>;
  /** How many {{n}} the body has. */
  parameter_count: number;
}

/** An address as a mail names it. */
export interface MailAddress {
  email: string;
  name?: string;
}

/** What an e-mail message shows of its headers (Message.email, docs/email.md). */
export interface EmailHeaders {
  messageId: string;
  inReplyTo: string | null;
  from: MailAddress;
  to: MailAddress[];
  cc: MailAddress[];
  /** Outbound only: the blind copies the reply was sent to. */
  bcc?: MailAddress[];
  subject: string | null;
  /** The ids the mail names in References, as written (kept for a reply's own References). */
  references?: string[];
  /** Inbound only: a machine sent it (an auto-reply, a list, a bounce): no away message answers it. */
  automatic?: true;
}

export interface MessagesTable {
  id: Generated<number>;
  workspace_id: number;
  thread_id: number;
  connection_id: number;
  direction: 'inbound' | 'outbound';
  external_id: string | null;
  text: Generated<string>;
  status: MessageStatus;
  error: string | null;
  kind: Generated<MessageKind>;
  private: Generated<boolean>;
  author_id: number | null;
  /** A note the workspace's model wrote (docs/ai.md, "Summarize"). */
  ai: Generated<boolean>;
  /** A reply or note the service wrote on its own: a rule's, an away message, a CSAT survey (author_id null). */
  automation: Generated<boolean>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
  /** The send attempt holding the message now (see replies/send-claim.ts); null when none does. */
  send_claim_token: string | null;
  send_claimed_at: Date | null;
  /** The attempt number last claimed (0: never sent). */
  send_attempt: Generated<number>;
  /** A template reply: the `template` object sent to WhatsApp as is; null for text. */
  template: ColumnType<unknown, string | null | undefined, string | null>;
  /** The users a note names (docs/teams.md, "Mentions and notifications"); null on other messages. */
  mentions: number[] | null;
  /** E-mail only (Message.email, docs/email.md); null on other channels. */
  email: ColumnType<EmailHeaders | null, string | null | undefined, string | null>;
  /** An e-mail's sanitized HTML part. */
  html: string | null;
  /** The quoted history and signature cut from an e-mail's text. */
  quoted_text: string | null;
}

export interface SessionsTable {
  id: string;
  user_id: number;
  remember: boolean;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  revoked_at: NullableTimestamp;
}

export type AccountTokenKind = 'password_reset' | 'invite' | 'setup';

/** One-time links of docs/accounts.md; only the token's SHA-256 is kept. */
export interface AccountTokensTable {
  id: Generated<number>;
  kind: AccountTokenKind;
  token_hash: string;
  /** Null for a setup token, which creates its user. */
  user_id: number | null;
  created_at: Generated<Date>;
  /** Null: valid until used (the setup link). */
  expires_at: NullableTimestamp;
  used_at: NullableTimestamp;
}

export interface AuthCodesTable {
  code_hash: string;
  user_id: number;
  /** The session it was minted in, whose end spends it; null for one minted outside any (single sign-on's). */
  session_id: string | null;
  remember: boolean;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  used_at: NullableTimestamp;
}

export interface PersonalAccessTokensTable {
  id: Generated<number>;
  user_id: number;
  name: string;
  token_hash: string;
  token_prefix: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  last_used_at: NullableTimestamp;
  revoked_at: NullableTimestamp;
}

export interface LoginAttemptsTable {
  id: Generated<number>;
  email: string;
  ip: string;
  created_at: Generated<Date>;
}

export interface TelegramWebhookSecretsTable {
  connection_id: number;
  secret_hash: string;
  created_at: Generated<Date>;
}

export interface WebhookTokensTable {
  integration_key: string;
  token: string;
  expires_at: Date;
}

export interface RateLimitHitsTable {
  id: Generated<number>;
  bucket: string;
  created_at: Date;
  /** What the hit counts against its limit: 1 for a call, the bytes of an upload. */
  cost: Generated<string>;
}

export type EndpointScheme = 'service' | 'standard';
export type OutboundDeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface WebhookEndpointsTable {
  id: Generated<number>;
  workspace_id: number;
  url: string;
  description: string;
  events: string[];
  enabled: boolean;
  signature_scheme: EndpointScheme;
  /** Sealed signing secrets (src/webhooks-out/endpoint-secrets.ts); never read elsewhere. */
  secret_sealed: Buffer;
  previous_secret_sealed: Buffer | null;
  previous_secret_expires_at: NullableTimestamp;
  disabled_reason: string | null;
  failing_since: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WorkspaceAiTable {
  workspace_id: number;
  base_url: string | null;
  model: string | null;
  api_key_sealed: Buffer | null;
  enabled: Generated<boolean>;
  updated_at: Timestamp;
}

/** A receipt that arrived before its send was recorded (messaging/early-receipts.ts). */
export interface EarlyReceiptsTable {
  id: Generated<number>;
  integration_key: string;
  external_message_id: string;
  /** The provider account the receipt's delivery named; null: any of the integration's. */
  account: string | null;
  status: 'sent' | 'delivered' | 'read' | 'failed';
  error: string | null;
  received_at: Date;
}

export interface WebhookEventsTable {
  id: string;
  workspace_id: number;
  type: string;
  body: string;
  created_at: Timestamp;
  /** Insertion order; with `txid`, the event log's order (docs/outbound-webhooks.md, "Event log"). */
  seq: Generated<string>;
  /** xid8 of the writing transaction, as text. */
  txid: Generated<string>;
}

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  endpoint_id: number;
  event_id: string;
  status: OutboundDeliveryStatus;
  attempt_count: number;
  job_id: string | null;
  next_attempt_at: NullableTimestamp;
  created_at: Timestamp;
  updated_at: Timestamp;
}

export interface WebhookAttemptsTable {
  id: Generated<number>;
  delivery_id: number;
  /** The delivery's event, the partition key; NULL only on attempts written before 0067. */
  event_id: string | null;
  attempted_at: Timestamp;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
}

export interface LivechatVisitorsTable {
  id: Generated<number>;
  workspace_id: number;
  connection_id: number;
  contact_id: number;
  thread_id: number;
  /** The contact's handle (external id) on the livechat channel. */
  handle: string;
  token_hash: string;
  email: string | null;
  ip: string;
  created_at: Generated<Date>;
  expires_at: Timestamp;
}

export interface TeamsTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  description: string | null;
  /** Routing by availability applies to the team's threads (docs/teams.md). */
  auto_assign: Generated<boolean>;
  /** The team's own business hours (docs/sla.md), which win over the workspace's; null = the workspace's. */
  business_hours: ColumnType<BusinessHoursValue | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** Business hours as stored (src/sla/business-hours.ts checks them). */
export interface BusinessHoursValue {
  timezone: string;
  weekly: Record<'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun', string[][]>;
  holidays: string[];
}

export type ThreadPriority = 'low' | 'normal' | 'high' | 'urgent';
export type SlaStatus = 'ok' | 'warning' | 'breached';

/** SLA policies (docs/sla.md): targets are ISO 8601 durations as given. */
export interface SlaPoliciesTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  position: number;
  enabled: Generated<boolean>;
  first_response: string | null;
  next_response: string | null;
  resolution: string | null;
  business_hours_only: Generated<boolean>;
  conditions: ColumnType<SlaConditionsValue, string | undefined, string>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

/** Automation rules (docs/automation.md): conditions and actions as checked at save. */
export type RuleEvent = 'message.created' | 'thread.created' | 'thread.updated' | 'thread.idle';
export type RuleScalar = string | number | boolean;
export interface RuleCondition {
  field: string;
  op: string;
  value?: RuleScalar | RuleScalar[];
}
export type RuleAction =
  | { type: 'assign_user'; userId: number }
  | { type: 'assign_team'; teamId: number }
  | { type: 'route' }
  | { type: 'add_labels'; labels: string[] }
  | { type: 'remove_labels'; labels: string[] }
  | { type: 'set_status'; status: ThreadStatus; snoozeMinutes?: number }
  | { type: 'set_priority'; priority: ThreadPriority }
  | { type: 'reply'; text?: string; template?: { name: string; language: string; parameters?: { header?: string[]; body?: string[] } } }
  | { type: 'note'; text: string };

export interface AutomationRulesTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  enabled: Generated<boolean>;
  position: number;
  event: RuleEvent;
  match: Generated<'all' | 'any'>;
  conditions: ColumnType<RuleCondition[], string | undefined, string>;
  actions: ColumnType<RuleAction[], string | undefined, string>;
  idle_minutes: number | null;
  statuses: ThreadStatus[] | null;
  idle_cutoff_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  idle_cutoff_id: ColumnType<number | null, number | null | undefined, number | null>;
  runs: Generated<number>;
  last_run_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  last_error: ColumnType<string | null, string | null | undefined, string | null>;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface MacrosTable {
  id: Generated<number>;
  workspace_id: number;
  name: string;
  actions: ColumnType<RuleAction[], string, string>;
  shared: Generated<boolean>;
  author_id: number | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface SlaConditionsValue {
  priorities?: ThreadPriority[];
  connectionIds?: number[];
  teamIds?: number[];
  labels?: string[];
}

export type NotificationType = 'assigned' | 'mentioned' | 'message' | 'sla_warning' | 'sla_breached';

export interface NotificationsTable {
  id: Generated<number>;
  workspace_id: number;
  user_id: number;
  type: NotificationType;
  thread_id: number | null;
  message_id: number | null;
  actor_id: number | null;
  created_at: Generated<Date>;
  read_at: Date | null;
}

/** A notification waiting for its user's next e-mail. */
export interface NotificationMailQueueTable {
  notification_id: number;
  user_id: number;
}

/** When a user was last e-mailed their notifications: the start of their window. */
export interface NotificationMailTimesTable {
  user_id: number;
  sent_at: Date | null;
}

export interface TeamMembersTable {
  team_id: number;
  user_id: number;
}

export interface CannedResponsesTable {
  id: Generated<number>;
  workspace_id: number;
  short_code: string;
  content: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type ExportStatus = 'pending' | 'ready' | 'failed';

/** A zip of a contact's (contact_id set) or a whole workspace's data (docs/privacy.md, "Export"). */
export interface ExportsTable {
  id: string;
  workspace_id: number;
  contact_id: number | null;
  status: ColumnType<ExportStatus, ExportStatus | undefined, ExportStatus>;
  storage_key: string | null;
  size: ColumnType<string | null, number | null | undefined, number | null>;
  error: string | null;
  created_at: Generated<Date>;
  finished_at: NullableTimestamp;
  expires_at: Timestamp;
}

export interface DB {
  workspaces: WorkspacesTable;
  users: UsersTable;
  user_sockets: UserSocketsTable;
  user_assignment_times: UserAssignmentTimesTable;
  api_keys: ApiKeysTable;
  connections: ConnectionsTable;
  webhook_inbox: WebhookInboxTable;
  idempotency_keys: IdempotencyKeysTable;
  contacts: ContactsTable;
  contact_handles: ContactHandlesTable;
  threads: ThreadsTable;
  conversations: ConversationsTable;
  messages: MessagesTable;
  attachments: AttachmentsTable;
  attachment_chunks: AttachmentChunksTable;
  sessions: SessionsTable;
  auth_codes: AuthCodesTable;
  account_tokens: AccountTokensTable;
  personal_access_tokens: PersonalAccessTokensTable;
  login_attempts: LoginAttemptsTable;
  webhook_endpoints: WebhookEndpointsTable;
  webhook_events: WebhookEventsTable;
  early_receipts: EarlyReceiptsTable;
  workspace_ai: WorkspaceAiTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  livechat_visitors: LivechatVisitorsTable;
  rate_limit_hits: RateLimitHitsTable;
  telegram_webhook_secrets: TelegramWebhookSecretsTable;
  webhook_tokens: WebhookTokensTable;
  whatsapp_templates: WhatsappTemplatesTable;
  canned_responses: CannedResponsesTable;
  teams: TeamsTable;
  sla_policies: SlaPoliciesTable;
  automation_rules: AutomationRulesTable;
  macros: MacrosTable;
  team_members: TeamMembersTable;
  notifications: NotificationsTable;
  notification_mail_queue: NotificationMailQueueTable;
  notification_mail_times: NotificationMailTimesTable;
  recovery_codes: RecoveryCodesTable;
  sso_logins: SsoLoginsTable;
  audit_log: AuditLogTable;
  imap_mailbox_state: ImapMailboxStateTable;
  imap_messages: ImapMessagesTable;
  exports: ExportsTable;
}

export type { NullableTimestamp, Timestamp };
