import { type Selectable, sql } from 'kysely';
import { type Executor, PREPARED } from '../db/database.js';
import { messageColumnsSql } from '../db/message-columns.js';
import type { MessagesTable } from '../db/types.js';
import type { SendResult } from './replies.queries.js';

/**
 * Claims the sends of `wants` for `token`, one statement: a message is claimed when it is an
 * outbound message still `queued`, no other attempt holds a claim younger than `staleMs`, and
 * the job is of a newer attempt than the last one claimed, or of the same attempt whose claim
 * was abandoned. The UPDATE locks each row it changes, so of two attempts claiming one message
 * at once the second waits, sees the first's claim, and claims nothing. Times are the
 * database's, so api and worker processes on other machines agree on a claim's age.
 * Prepared, like the batch's read of its contexts and its outcomes' write: every send batch runs them.
 */
export async function claimMessages(db: Executor, wants: { messageId: number; attempt: number }[], token: string, staleMs: number) {
  if (wants.length === 0) return [];
  // `prior` is the row as it was before this statement: whether a stale claim was taken over.
  const { rows } = await sql<{ id: number; taken_over: boolean }>`${PREPARED}
    UPDATE messages AS m
    SET send_claim_token = ${token}, send_claimed_at = clock_timestamp(), send_attempt = w.attempt
    FROM unnest(${wants.map((w) => w.messageId)}::bigint[], ${wants.map((w) => w.attempt)}::int[]) AS w(id, attempt), messages AS prior
    WHERE m.id = w.id AND prior.id = m.id AND m.direction = 'outbound' AND m.status = 'queued'
      AND (m.send_claim_token IS NULL OR m.send_claimed_at <= clock_timestamp() - make_interval(secs => ${staleMs / 1000}))
      AND (m.send_attempt < w.attempt OR (m.send_attempt = w.attempt AND m.send_claim_token IS NOT NULL))
    RETURNING m.id, prior.send_claim_token IS NOT NULL AS taken_over`.execute(db);
  return rows.map((r) => ({ id: Number(r.id), takenOver: r.taken_over }));
}

/**
 * Of `ids`, the messages still `queued` whose send another attempt holds: the attempt it
 * holds and when its claim will count as abandoned (`staleMs` after it was taken).
 */
export async function findHeldClaims(db: Executor, ids: number[], token: string, staleMs: number) {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: number; send_attempt: number; stale_at: Date }>`
    SELECT id, send_attempt, send_claimed_at + make_interval(secs => ${staleMs / 1000}) AS stale_at
    FROM messages
    WHERE id = ANY(${ids}::bigint[]) AND direction = 'outbound' AND status = 'queued'
      AND send_claim_token IS NOT NULL AND send_claim_token <> ${token}`.execute(db);
  return rows.map((r) => ({ id: Number(r.id), attempt: r.send_attempt, staleAt: r.stale_at }));
}

/**
 * Records the outcomes of sends `token` still holds (`sent` with the provider's id, or
 * `failed`), ending their claims; returns the rows it changed. A message that moved on (a
 * receipt raced ahead) or whose claim was taken over is left alone.
 */
export async function recordClaimedOutcomes(db: Executor, token: string, results: SendResult[], at: Date) {
  if (results.length === 0) return [];
  const { rows } = await sql<Selectable<MessagesTable>>`${PREPARED}
    UPDATE messages AS m
    SET status = v.status, external_id = COALESCE(v.external_id, m.external_id), error = v.error, updated_at = ${at},
        send_claim_token = NULL, send_claimed_at = NULL
    FROM unnest(${results.map((r) => r.id)}::bigint[], ${results.map((r) => r.status)}::text[],
                ${results.map((r) => (r.status === 'sent' ? r.externalId : null))}::text[], ${results.map((r) => r.error ?? null)}::text[])
      AS v(id, status, external_id, error)
    WHERE m.id = v.id AND m.status = 'queued' AND m.send_claim_token = ${token}
    RETURNING ${messageColumnsSql('m')}`.execute(db);
  return rows;
}

/** Marks `token`'s claims as still held now: its holder is alive and still sending. */
export async function refreshClaims(db: Executor, token: string) {
  await sql`UPDATE messages SET send_claimed_at = clock_timestamp() WHERE send_claim_token = ${token} AND status = 'queued'`.execute(db);
}

/** Ends `token`'s claims on `ids` (their sends will be tried again); returns the ids it still held. */
export async function releaseClaims(db: Executor, token: string, ids: number[]) {
  if (ids.length === 0) return [];
  const { rows } = await sql<{ id: number }>`
    UPDATE messages SET send_claim_token = NULL, send_claimed_at = NULL
    WHERE id = ANY(${ids}::bigint[]) AND status = 'queued' AND send_claim_token = ${token}
    RETURNING id`.execute(db);
  return rows.map((r) => Number(r.id));
}
