import { sql } from 'kysely';
import type { Executor } from '../db/database.js';
import { keysetPage, type SortKey } from '../db/pages.js';
import type { CursorRequest } from '../http/pagination.js';
import { type ThreadReader, visibleThreads } from '../threads/visibility.js';

/** SQL of CSAT (docs/reports.md, "CSAT"): the survey and its answer live on the conversation. */

/**
 * The thread's open conversation with what a survey needs of its connection: whether the
 * connection asks, its question and channel, whether it was deleted and whether the contact
 * was erased. Read before the conversation is resolved.
 */
export async function findSurveyTarget(db: Executor, threadId: number) {
  return db
    .selectFrom('conversations as c')
    .innerJoin('connections as k', 'k.id', 'c.connection_id')
    .innerJoin('threads as t', 't.id', 'c.thread_id')
    .innerJoin('contacts as p', 'p.id', 't.contact_id')
    .select([
      'c.id',
      'c.first_response_at',
      'c.csat_token_hash',
      'k.csat_enabled',
      'k.csat_question',
      'k.integration_key',
      'k.deleted_at as connection_deleted_at',
      'p.erased_at as contact_erased_at',
    ])
    .where('c.thread_id', '=', threadId)
    .where('c.resolved_at', 'is', null)
    .executeTakeFirst();
}

/** Puts the survey on a conversation, unless it has one (a survey is never sent twice). */
export async function markSurveySent(db: Executor, conversationId: number, tokenHash: string, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('conversations')
    .set({ csat_token_hash: tokenHash, csat_sent_at: at })
    .where('id', '=', conversationId)
    .where('csat_token_hash', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** The conversation whose survey link carries this token's hash, with what its page shows. */
export async function findSurvey(db: Executor, tokenHash: string) {
  return db
    .selectFrom('conversations as c')
    .innerJoin('threads as t', 't.id', 'c.thread_id')
    .innerJoin('connections as k', 'k.id', 'c.connection_id')
    .innerJoin('workspaces as w', 'w.id', 'c.workspace_id')
    .select([
      'c.id',
      'c.workspace_id',
      'c.thread_id',
      'c.assignee_id',
      'c.csat_sent_at',
      'c.csat_rating',
      'c.csat_comment',
      't.contact_id',
      'k.csat_question',
      'k.livechat_colour',
      'w.name as workspace_name',
    ])
    .where('c.csat_token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Records (or changes) the contact's answer. */
export async function rateConversation(db: Executor, id: number, rating: number, comment: string | null, at: Date) {
  await db.updateTable('conversations').set({ csat_rating: rating, csat_comment: comment, csat_at: at }).where('id', '=', id).execute();
}

export interface CsatFilters {
  from?: Date;
  to?: Date;
  ratings?: number[];
}

const BY_RATED: SortKey = { at: 'c.csat_at', id: 'c.id' };

/** The workspace's answers the reader sees, newest first, one cursor page. */
export async function listCsatResponses(db: Executor, reader: ThreadReader, filters: CsatFilters, page: CursorRequest) {
  let query = db
    .selectFrom('conversations as c')
    .innerJoin('threads as t', 't.id', 'c.thread_id')
    .select([
      'c.id',
      'c.thread_id',
      't.contact_id',
      'c.connection_id',
      'c.assignee_id',
      'c.team_id',
      'c.resolved_at',
      'c.csat_rating',
      'c.csat_comment',
      'c.csat_at',
    ])
    .where('c.workspace_id', '=', reader.workspaceId)
    .where('c.csat_at', 'is not', null)
    .where(visibleThreads(reader, 't'));
  if (filters.from) query = query.where('c.csat_at', '>=', filters.from);
  if (filters.to) query = query.where('c.csat_at', '<', filters.to);
  if (filters.ratings) query = query.where(sql<boolean>`c.csat_rating = ANY(${filters.ratings}::smallint[])`);
  return keysetPage(query, BY_RATED, page);
}

export type CsatResponseRow = Awaited<ReturnType<typeof listCsatResponses>>['items'][number];
