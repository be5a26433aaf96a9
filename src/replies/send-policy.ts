/**
 * docs/replies.md: a send that may succeed later (network error, timeout, 408, 429, 5xx) is
 * tried again after 60 s, 5 min and 15 min, then the message is `failed`. A provider's
 * `retry-after` wins when it asks for longer.
 */
export const SEND_RETRY_DELAYS_SECONDS = [60, 5 * 60, 15 * 60] as const;

/** When attempt `attempt` (1-based) was retryable: the next attempt's time, or null (give up). */
export function nextSendAttempt(attempt: number, now: Date, retryAfterSeconds?: number): Date | null {
  const delay = SEND_RETRY_DELAYS_SECONDS[attempt - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + Math.max(delay, retryAfterSeconds ?? 0) * 1000);
}

/** Integrations that only ever receive (the AI integration): nothing is sent through them. */
export const RECEIVE_ONLY = new Set(['ai']);
