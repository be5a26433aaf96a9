import { randomUUID } from 'node:crypto';
import type { Executor } from '../db/database.js';
import type { Deps } from '../deps.js';
import type { SendResult } from './replies.queries.js';
import { claimMessages, findHeldClaims, recordClaimedOutcomes, refreshClaims, releaseClaims } from './send-claim.queries.js';

/**
 * How long past the provider's own deadline a claim still counts as held: the time to open
 * credentials before the call and to commit the outcome after it, on a busy database.
 */
export const SEND_CLAIM_MARGIN_MS = 10_000;

interface ClaimJob {
  messageId: number;
  attempt: number;
}

export interface SendClaim<J extends ClaimJob> {
  /** This execution's attempt token, on every row it claimed. */
  token: string;
  /** The jobs whose message this execution now holds, one per message: these, and only these, are sent. */
  jobs: J[];
}

/**
 * Claims the sends of a batch before any provider is called (docs/replies.md, "Sent once").
 *
 * pg-boss hands a job to a second attempt when the first one's heartbeat lapses, and under
 * load that happens to attempts that are alive and still sending; both then found the message
 * `queued` and both sent it. Now each execution claims its messages on their rows under a
 * row lock (an attempt token and the time), sends only what it claimed, and records an
 * outcome only where its token still stands. A job that finds its message held by a claim
 * that is not yet stale sends nothing; it leaves a job to look again once the claim would be
 * stale (`recheck`), because the holder may have died mid-send: a claim older than
 * `staleAfterMs` (the send timeout plus SEND_CLAIM_MARGIN_MS) is taken over, and only then
 * can a reply go out twice (the process died after the provider answered).
 */
export async function claimSends<J extends ClaimJob>(
  deps: Deps,
  jobs: J[],
  options: { staleAfterMs: number; recheck: (job: J, at: Date) => Promise<void> },
): Promise<SendClaim<J>> {
  const token = randomUUID();
  // One job per message (a batch may hold two jobs of one message): the newest attempt.
  const byMessage = new Map<number, J>();
  for (const job of jobs) if ((byMessage.get(job.messageId)?.attempt ?? 0) < job.attempt) byMessage.set(job.messageId, job);
  const wanted = [...byMessage.values()];
  const rows = await claimMessages(deps.db, wanted, token, options.staleAfterMs);
  const claimed = new Set(rows.map((r) => r.id));
  const takenOver = rows.filter((r) => r.takenOver).map((r) => r.id);
  if (takenOver.length > 0) {
    // The one way a reply can reach a provider twice: say so, with the messages it may concern.
    deps.log.warn(
      { messageIds: takenOver },
      'taking over sends whose claim went stale (their process died or stalled mid-send); a provider may receive these replies twice',
    );
  }
  const others = wanted.filter((j) => !claimed.has(j.messageId));
  for (const held of await findHeldClaims(
    deps.db,
    others.map((j) => j.messageId),
    token,
    options.staleAfterMs,
  )) {
    const job = byMessage.get(held.id)!;
    // A later attempt holds it: that one sends or hands it on, this job is done.
    if (held.attempt > job.attempt) continue;
    await options.recheck(job, new Date(held.staleAt.getTime() + 1000));
  }
  return { token, jobs: wanted.filter((j) => claimed.has(j.messageId)) };
}

/**
 * Records a batch's outcomes under its claim: `results` (sent, failed) are written and their
 * claims end; the claims of `retried` are released, and the ids still held are returned, so
 * the caller schedules a next attempt only for a message this execution still owned.
 */
export async function settleClaims(trx: Executor, token: string, results: SendResult[], retried: number[], at: Date) {
  const changed = await recordClaimedOutcomes(trx, token, results, at);
  const released = new Set(await releaseClaims(trx, token, retried));
  return { changed, released };
}

/**
 * Keeps `token`'s claims fresh every `everyMs` while its sends are in flight, so a holder that
 * is alive but slow (a provider near its timeout, a busy database, an overloaded machine) is
 * never taken for dead: only a claim nobody refreshed for the stale time is taken over. Returns
 * the function that stops it.
 */
export function holdClaims(deps: Deps, token: string, everyMs: number): () => void {
  const timer = setInterval(() => {
    refreshClaims(deps.db, token).catch((err: unknown) => deps.log.warn({ err }, 'could not refresh reply send claims'));
  }, everyMs);
  timer.unref();
  return () => clearInterval(timer);
}
