import type { Migration } from 'kysely';
import * as m0001 from './0001_tenancy.js';
import * as m0002 from './0002_webhooks.js';
import * as m0003 from './0003_sessions.js';
import * as m0004 from './0004_payload_stored_once.js';
import * as m0005 from './0005_outbound_external_index.js';
import * as m0006 from './0006_pat_expiry.js';
import * as m0007 from './0007_delivery_verification.js';
import * as m0008 from './0008_connection_credentials.js';
import * as m0009 from './0009_outbound_webhooks.js';
import * as m0010 from './0010_livechat.js';
import * as m0011 from './0011_send_claim.js';
import * as m0012 from './0012_rate_limit_hits.js';
import * as m0013 from './0013_team_contacts.js';
import * as m0014 from './0014_conversation_workflow.js';
import * as m0015 from './0015_search.js';
import * as m0016 from './0016_workflow_extra.js';
import * as m0017 from './0017_attachments.js';
import * as m0018 from './0018_stock_providers.js';
import * as m0019 from './0019_thread_labels.js';
import * as m0020 from './0020_reply_windows.js';
import * as m0021 from './0021_templates.js';
import * as m0022 from './0022_attachment_uploader.js';
import * as m0023 from './0023_attachment_chunks_uncompressed.js';
import * as m0024 from './0024_inbox_raw_bytes.js';
import * as m0025 from './0025_tenant_limits.js';
import * as m0030 from './0030_teams.js';
import * as m0031 from './0031_workspace_settings.js';
import * as m0032 from './0032_user_availability.js';
import * as m0033 from './0033_notifications.js';
import * as m0035 from './0035_account_tokens.js';
import * as m0036 from './0036_threads_labels_index_dropped.js';
import * as m0037 from './0037_search_vector_deferred.js';
import * as m0038 from './0038_threads_pair_key_by_contact.js';
import * as m0040 from './0040_notification_mail.js';
import * as m0041 from './0041_connection_webhooks.js';
import * as m0042 from './0042_connection_health.js';
import * as m0043 from './0043_sla.js';
import * as m0046 from './0046_email_conversations.js';
import * as m0048 from './0048_two_factor.js';
import * as m0049 from './0049_audit_log.js';
import * as m0052 from './0052_livechat_settings.js';
import * as m0054 from './0054_conversations.js';
import * as m0055 from './0055_csat.js';
import * as m0056 from './0056_automation_rules.js';
import * as m0057 from './0057_macros.js';
import * as m0058 from './0058_imap_mailboxes.js';
import * as m0059 from './0059_single_sign_on.js';
import * as m0060 from './0060_contact_erasure.js';
import * as m0061 from './0061_exports.js';
import * as m0062 from './0062_event_log.js';
import * as m0063 from './0063_ai_assist.js';
import * as m0064 from './0064_connection_csat.js';
import * as m0065 from './0065_event_log_unchecked_workspace.js';
import * as m0066 from './0066_inbox_partitions.js';
import * as m0067 from './0067_outbound_partitions.js';
import * as m0068 from './0068_messages_unchecked_keys.js';
import * as m0069 from './0069_search_index_without_nulls.js';
import * as m0070 from './0070_message_automation.js';
import * as m0071 from './0071_early_receipts.js';
import * as m0072 from './0072_connection_accounts_as_delivered.js';
import * as m0073 from './0073_auth_codes_by_session.js';
import * as m0074 from './0074_sms_numbers_in_e164.js';

/**
 * Every migration, in order. A static list (not a folder scan) so the same code runs under
 * tsx, vitest and the compiled build. Add new files at the end; never edit a shipped one.
 */
export const migrations: Record<string, Migration> = {
  '0001_tenancy': m0001,
  '0002_webhooks': m0002,
  '0003_sessions': m0003,
  '0004_payload_stored_once': m0004,
  '0005_outbound_external_index': m0005,
  '0006_pat_expiry': m0006,
  '0007_delivery_verification': m0007,
  '0008_connection_credentials': m0008,
  '0009_outbound_webhooks': m0009,
  '0010_livechat': m0010,
  '0011_send_claim': m0011,
  '0012_rate_limit_hits': m0012,
  '0013_team_contacts': m0013,
  '0014_conversation_workflow': m0014,
  '0015_search': m0015,
  '0016_workflow_extra': m0016,
  '0017_attachments': m0017,
  '0018_stock_providers': m0018,
  '0019_thread_labels': m0019,
  '0020_reply_windows': m0020,
  '0021_templates': m0021,
  '0022_attachment_uploader': m0022,
  '0023_attachment_chunks_uncompressed': m0023,
  '0024_inbox_raw_bytes': m0024,
  '0025_tenant_limits': m0025,
  '0030_teams': m0030,
  '0031_workspace_settings': m0031,
  '0032_user_availability': m0032,
  '0033_notifications': m0033,
  '0035_account_tokens': m0035,
  '0036_threads_labels_index_dropped': m0036,
  '0037_search_vector_deferred': m0037,
  '0038_threads_pair_key_by_contact': m0038,
  '0040_notification_mail': m0040,
  '0041_connection_webhooks': m0041,
  '0042_connection_health': m0042,
  '0043_sla': m0043,
  '0046_email_conversations': m0046,
  '0048_two_factor': m0048,
  '0049_audit_log': m0049,
  '0052_livechat_settings': m0052,
  '0054_conversations': m0054,
  '0055_csat': m0055,
  '0056_automation_rules': m0056,
  '0057_macros': m0057,
  '0058_imap_mailboxes': m0058,
  '0059_single_sign_on': m0059,
  '0060_contact_erasure': m0060,
  '0061_exports': m0061,
  '0062_event_log': m0062,
  '0063_ai_assist': m0063,
  '0064_connection_csat': m0064,
  '0065_event_log_unchecked_workspace': m0065,
  '0066_inbox_partitions': m0066,
  '0067_outbound_partitions': m0067,
  '0068_messages_unchecked_keys': m0068,
  '0069_search_index_without_nulls': m0069,
  '0070_message_automation': m0070,
  '0071_early_receipts': m0071,
  '0072_connection_accounts_as_delivered': m0072,
  '0073_auth_codes_by_session': m0073,
  '0074_sms_numbers_in_e164': m0074,
};
