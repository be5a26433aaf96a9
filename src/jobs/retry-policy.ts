/**
 * The retry schedule (docs/webhooks.md, "States, retries and dead letters"), shared by inbound processing and outbound webhooks: delays before
 * attempts 2, 3, 4, 5 and every later one.
 */
export const RETRY_DELAYS_SECONDS = [60, 5 * 60, 15 * 60, 30 * 60, 60 * 60] as const;

/** A delivery that has failed this many attempts is dead-lettered and never retried. */
export const MAX_ATTEMPTS = 8;

export type FailureOutcome = { status: 'failed'; nextRetryAt: Date } | { status: 'dead_letter'; nextRetryAt: null };

/** What happens after attempt number `attempt` (1-based) failed at `now`. */
export function afterFailedAttempt(attempt: number, now: Date): FailureOutcome {
  if (attempt >= MAX_ATTEMPTS) return { status: 'dead_letter', nextRetryAt: null };
  const delay = RETRY_DELAYS_SECONDS[Math.min(attempt, RETRY_DELAYS_SECONDS.length) - 1]!;
  return { status: 'failed', nextRetryAt: new Date(now.getTime() + delay * 1000) };
}
