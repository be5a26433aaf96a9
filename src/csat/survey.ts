import { randomBytes } from 'node:crypto';
import { isEmailIntegration } from '../channels/email-inbound.js';
import { replyWindowEndsAt } from '../channels/reply-window.js';
import { DEFAULT_CSAT_QUESTION } from '../connections/csat-settings.js';
import { sha256Hex } from '../crypto/hmac.js';
import type { Executor } from '../db/database.js';
import { type Announcer, announce } from '../messaging/announce.js';
import { emailReplyHeaders } from '../replies/email-reply.js';
import { queueMessage } from '../replies/queue-message.js';
import { RECEIVE_ONLY } from '../replies/send-policy.js';
import { findSurveyTarget, markSurveySent } from './csat.queries.js';

/** The path of a survey's page under INBOX_PUBLIC_URL; the token follows. */
export const CSAT_PATH = '/csat/';

/** A survey link's token: 32 URL-safe characters (192 random bits). Only its hash is stored. */
export const newSurveyToken = () => randomBytes(24).toString('base64url');
export const hashSurveyToken = (token: string) => sha256Hex(token);

/** The survey's link: `<INBOX_PUBLIC_URL>/csat/<token>`. */
export const surveyUrl = (publicUrl: string, token: string) => `${publicUrl.replace(/\/+$/, '')}${CSAT_PATH}${token}`;

/**
 * A user resolves a thread (docs/reports.md, "CSAT"): when its connection asks and the
 * conversation had a reply, the contact gets the question and the survey's link on the same
 * channel, queued as a reply is (its send job, announced `message.created`) in the caller's
 * transaction, before the conversation is closed (so it counts among its messages out). Not
 * sent twice for one conversation, nor where the channel's reply window has closed, nor on a
 * deleted or receive-only connection, nor to an erased contact. Answers whether it was queued.
 */
export async function sendSurvey(
  deps: Announcer,
  trx: Executor,
  thread: { id: number; workspace_id: number; connection_id: number; last_inbound_at: Date | null },
  now: Date,
): Promise<boolean> {
  const target = await findSurveyTarget(trx, thread.id);
  if (!target?.csat_enabled || target.first_response_at === null || target.csat_token_hash !== null) return false;
  if (target.connection_deleted_at !== null || RECEIVE_ONLY.has(target.integration_key)) return false;
  // An erased contact has no handle left: there is nobody to ask.
  if (target.contact_erased_at !== null) return false;
  const windowEnd = replyWindowEndsAt(target.integration_key, thread.last_inbound_at);
  if (windowEnd && now.getTime() > windowEnd.getTime()) return false;
  const token = newSurveyToken();
  if (!(await markSurveySent(trx, target.id, hashSurveyToken(token), now))) return false;
  const text = `${target.csat_question ?? DEFAULT_CSAT_QUESTION}\n${surveyUrl(deps.config.publicUrl, token)}`;
  const row = await queueMessage(
    deps.boss,
    trx,
    {
      workspaceId: thread.workspace_id,
      threadId: thread.id,
      connectionId: thread.connection_id,
      text,
      attachmentIds: [],
      authorId: null,
      automation: true,
      ...(isEmailIntegration(target.integration_key) ? { email: await emailReplyHeaders(trx, thread.id, {}) } : {}),
    },
    now,
  );
  await announce(deps, trx, [{ type: 'message.created', message: row }], now, { bare: new Set([row.id]) });
  return true;
}
