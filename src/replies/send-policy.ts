/**
 * docs/replies.md: a send that may succeed later (network error, timeout, 408, 429, 5xx) is
 * tried again after 60 s, 5 min and 15 min, then the message is `failed`. A provider's
 * `retry-after` wins when it asks for longer, up to a day.
 */
export const SEND_RETRY_DELAYS_SECONDS = [60, 5 * 60, 15 * 60] as const;

/**
 * The longest `retry-after` honoured: a day. A provider asking for more (or for a time past
 * what a date can hold) still gets its attempts on this side of it, so the reply ends `sent`
 * or `failed` in bounded time instead of staying `queued` for years.
 */
export const SEND_RETRY_AFTER_MAX_SECONDS = 24 * 60 * 60;

/** When attempt `attempt` (1-based) was retryable: the next attempt's time, or null (give up). */
export function nextSendAttempt(attempt: number, now: Date, retryAfterSeconds?: number): Date | null {
  const delay = SEND_RETRY_DELAYS_SECONDS[attempt - 1];
  if (delay === undefined) return null;
  return new Date(now.getTime() + Math.max(delay, Math.min(retryAfterSeconds ?? 0, SEND_RETRY_AFTER_MAX_SECONDS)) * 1000);
}

/** Integrations that only ever receive (the AI integration): nothing is sent through them. */
export const RECEIVE_ONLY = new Set(['ai']);
