import type { Static, TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import type * as Client from '../../packages/client/src/index.js';
import type { ApiKeyResource, IssuedApiKey } from '../../src/api-keys/api-keys.service.js';
import type { AttachmentResource } from '../../src/attachments/attachments.resources.js';
import type { AuditEntryResource } from '../../src/audit/audit.routes.js';
import type {
  InviteAcceptBody,
  PasswordResetBody,
  PasswordResetConfirmBody,
  ResetAccepted,
  SetupBody,
  SetupResult,
  SetupStatus,
} from '../../src/auth/account-links.routes.js';
import type { PasswordChangeBody, PasswordChanged } from '../../src/auth/password.routes.js';
import type { IssuedPat, CreateBody as PatCreate, PatResource } from '../../src/auth/personal-access-tokens.routes.js';
import type { TwoFactorEnabled, TwoFactorSetup, TwoFactorStatus } from '../../src/auth/two-factor.routes.js';
import type { AuthCode, LoginResponse } from '../../src/auth/user.routes.js';
import type { AutomationRuleCreate, AutomationRulePatch, AutomationRuleResource } from '../../src/automation/automation-rules.resources.js';
import type { MacroCreate, MacroPatch, MacroResource } from '../../src/automation/macros.resources.js';
import type { RuleActionSchema } from '../../src/automation/rule-actions.resources.js';
import type { CannedResponseCreate, CannedResponsePatch } from '../../src/canned-responses/canned-responses.routes.js';
import type { CannedResponseResource } from '../../src/canned-responses/canned-responses.service.js';
import type { ConnectionCredentials } from '../../src/connections/connection-credentials.js';
import type { ConnectionCreateBody, ConnectionPatch, ConnectionResource } from '../../src/connections/connections.service.js';
import type { TemplateResource } from '../../src/connections/templates.service.js';
import type { ContactResource } from '../../src/contacts/contacts.resources.js';
import type { ContactMergeBody, ContactPatchBody } from '../../src/contacts/contacts.routes.js';
import type { Blocked } from '../../src/livechat/block-visitor.routes.js';
import type { MessageResource } from '../../src/messaging/messaging.resources.js';
import type { NotificationResource } from '../../src/notifications/notifications.resources.js';
import type { NotificationsQuery } from '../../src/notifications/notifications.routes.js';
import type { StartBody, Started } from '../../src/replies/conversations.routes.js';
import type { ReplyBody } from '../../src/replies/replies.routes.js';
import type { TemplateReply } from '../../src/replies/template-reply.js';
import type { ReportSummary } from '../../src/reports/reports.routes.js';
import type { SlaPolicyCreate, SlaPolicyPatch, SlaPolicyResource } from '../../src/sla/sla-policies.resources.js';
import type { TeamResource } from '../../src/teams/teams.resources.js';
import type { TeamCreate, TeamMembersBody, TeamPatch } from '../../src/teams/teams.routes.js';
import type { LabelResource } from '../../src/threads/labels.routes.js';
import type { SearchQuery } from '../../src/threads/search.routes.js';
import type { ThreadFilterQuery } from '../../src/threads/thread-filters.js';
import type { ThreadPatchBody } from '../../src/threads/thread-workflow.routes.js';
import type { ThreadResource } from '../../src/threads/threads.resources.js';
import type { ViewingBody } from '../../src/threads/viewing.routes.js';
import type { TeamUserResource, UserResource } from '../../src/users/users.resources.js';
import type { OwnUserPatch, TeamUserCreate, TeamUserPatch } from '../../src/users/users.routes.js';
import type { InboxResource, InboxSummary, RequeueResult } from '../../src/webhooks-in/inbox.resources.js';
import type {
  AttemptResource,
  DeliveryResource,
  EndpointCreate,
  EndpointPatch,
  EndpointResource,
  EndpointWithSecret,
} from '../../src/webhooks-out/endpoints.resources.js';
import type { WorkspaceSettingsPatch, WorkspaceSettingsResource } from '../../src/workspaces/workspace-settings.js';
import type { WorkspaceResource } from '../../src/workspaces/workspaces.service.js';

/**
 * The client's types are plain TypeScript (so its declarations need no server package);
 * these assertions keep each equal to the server's schema. A field added to, removed from or
 * retyped in a schema without the client fails `npm run typecheck` here.
 */
type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Same<C, S extends TSchema> = Equal<C, Static<S>>;
const same = <T extends true>(ok: T) => ok;
/**
 * Query strings stay strings in the server's schemas while the client takes numbers and
 * lists, so a list's filters are held to the same names rather than the same types.
 */
type SameKeys<C, S extends TSchema> = Equal<keyof C, keyof Static<S>>;

const checks = [
  same<Same<Client.Thread, typeof ThreadResource>>(true),
  same<Same<Client.Message, typeof MessageResource>>(true),
  same<Same<Client.Attachment, typeof AttachmentResource>>(true),
  same<Same<Client.Contact, typeof ContactResource>>(true),
  same<Same<Client.Connection, typeof ConnectionResource>>(true),
  same<Same<Client.ConnectionPatch, typeof ConnectionPatch>>(true),
  same<Same<Client.ConnectionCreate, typeof ConnectionCreateBody>>(true),
  same<Same<Client.ConnectionCredentials, typeof ConnectionCredentials>>(true),
  same<Same<Client.ApiKey, typeof ApiKeyResource>>(true),
  same<Same<Client.IssuedApiKey, typeof IssuedApiKey>>(true),
  same<Same<Client.PersonalAccessToken, typeof PatResource>>(true),
  same<Same<Client.IssuedPersonalAccessToken, typeof IssuedPat>>(true),
  same<Same<Client.PersonalAccessTokenCreate, typeof PatCreate>>(true),
  same<Same<Client.Workspace, typeof WorkspaceResource>>(true),
  same<Same<Client.User, typeof UserResource>>(true),
  same<Same<Client.LoginResponse, typeof LoginResponse>>(true),
  same<Same<Client.AuthCode, typeof AuthCode>>(true),
  same<Same<Client.PasswordChange, typeof PasswordChangeBody>>(true),
  same<Same<Client.TwoFactorStatus, typeof TwoFactorStatus>>(true),
  same<Same<Client.AuditEntry, typeof AuditEntryResource>>(true),
  same<Same<Client.TwoFactorSetup, typeof TwoFactorSetup>>(true),
  same<Same<Client.TwoFactorEnabled, typeof TwoFactorEnabled>>(true),
  same<Same<Client.PasswordChanged, typeof PasswordChanged>>(true),
  same<Same<Client.PasswordReset, typeof PasswordResetBody>>(true),
  same<Same<Client.PasswordResetAccepted, typeof ResetAccepted>>(true),
  same<Same<Client.PasswordResetConfirm, typeof PasswordResetConfirmBody>>(true),
  same<Same<Client.InviteAccept, typeof InviteAcceptBody>>(true),
  same<Same<Client.SetupStatus, typeof SetupStatus>>(true),
  same<Same<Client.SetupRequest, typeof SetupBody>>(true),
  same<Same<Client.SetupResult, typeof SetupResult>>(true),
  same<Same<Client.WebhookInboxRow, typeof InboxSummary>>(true),
  same<Same<Client.WebhookInboxRecord, typeof InboxResource>>(true),
  same<Same<Client.RequeueResult, typeof RequeueResult>>(true),
  same<Same<Client.WebhookEndpoint, typeof EndpointResource>>(true),
  same<Same<Client.WebhookEndpointWithSecret, typeof EndpointWithSecret>>(true),
  same<Same<Client.WebhookEndpointCreate, typeof EndpointCreate>>(true),
  same<Same<Client.WebhookEndpointPatch, typeof EndpointPatch>>(true),
  same<Same<Client.WebhookAttempt, typeof AttemptResource>>(true),
  same<Same<Client.WebhookDelivery, typeof DeliveryResource>>(true),
  same<Same<Client.ContactPatch, typeof ContactPatchBody>>(true),
  same<Same<Client.ContactMerge, typeof ContactMergeBody>>(true),
  same<Same<Client.VisitorBlocked, typeof Blocked>>(true),
  same<Same<Client.TeamUser, typeof TeamUserResource>>(true),
  same<Same<Client.TeamUserCreate, typeof TeamUserCreate>>(true),
  same<Same<Client.TeamUserPatch, typeof TeamUserPatch>>(true),
  same<Same<Client.OwnUserPatch, typeof OwnUserPatch>>(true),
  same<Same<Client.CannedResponse, typeof CannedResponseResource>>(true),
  same<Same<Client.CannedResponseCreate, typeof CannedResponseCreate>>(true),
  same<Same<Client.CannedResponsePatch, typeof CannedResponsePatch>>(true),
  same<Same<Client.ThreadPatch, typeof ThreadPatchBody>>(true),
  same<Same<Client.WorkspaceSettings, typeof WorkspaceSettingsResource>>(true),
  same<Same<Client.WorkspaceSettingsPatch, typeof WorkspaceSettingsPatch>>(true),
  same<Same<Client.Team, typeof TeamResource>>(true),
  same<Same<Client.SlaPolicy, typeof SlaPolicyResource>>(true),
  same<Same<Client.RuleAction, typeof RuleActionSchema>>(true),
  same<Same<Client.AutomationRule, typeof AutomationRuleResource>>(true),
  same<Same<Client.AutomationRuleCreate, typeof AutomationRuleCreate>>(true),
  same<Same<Client.AutomationRulePatch, typeof AutomationRulePatch>>(true),
  same<Same<Client.Macro, typeof MacroResource>>(true),
  same<Same<Client.MacroCreate, typeof MacroCreate>>(true),
  same<Same<Client.MacroPatch, typeof MacroPatch>>(true),
  same<Same<Client.ReportSummary, typeof ReportSummary>>(true),
  same<Same<Client.SlaPolicyCreate, typeof SlaPolicyCreate>>(true),
  same<Same<Client.SlaPolicyPatch, typeof SlaPolicyPatch>>(true),
  same<Same<Client.TeamCreate, typeof TeamCreate>>(true),
  same<Same<Client.TeamPatch, typeof TeamPatch>>(true),
  same<Same<Client.TeamMembers, typeof TeamMembersBody>>(true),
  same<Same<Client.ReplyRequest, typeof ReplyBody>>(true),
  same<Same<Client.StartConversationRequest, typeof StartBody>>(true),
  same<Same<Client.StartedConversation, typeof Started>>(true),
  same<Same<Client.WhatsappTemplate, typeof TemplateResource>>(true),
  same<Same<Client.TemplateReply, typeof TemplateReply>>(true),
  same<Same<Client.Label, typeof LabelResource>>(true),
  same<Same<Client.Notification, typeof NotificationResource>>(true),
  same<Same<Client.ThreadViewing, typeof ViewingBody>>(true),
  same<SameKeys<Client.ListQuery & { unread?: boolean; cursor?: string }, typeof NotificationsQuery>>(true),
  same<Equal<keyof Client.ThreadFilters, keyof ThreadFilterQuery>>(true),
  same<SameKeys<Client.MessageSearch & Client.ListQuery & { cursor?: string }, typeof SearchQuery>>(true),
];

describe('client types', () => {
  it('equal the server schemas (checked by the type checker; this only counts them)', () => {
    expect(checks.every(Boolean)).toBe(true);
  });
});
