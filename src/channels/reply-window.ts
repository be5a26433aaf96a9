/**
 * Reply windows (docs/replies.md, "Reply windows"): how long after a contact's last inbound
 * message a channel still takes a free-form reply. Measured from the provider's own timestamp
 * of that message. A channel absent here has no window.
 *
 * Imports nothing: the thread resource, the reply check and the Meta sender all read it.
 */

const HOUR_MS = 60 * 60 * 1000;

/** Meta's standard messaging window: a `RESPONSE` is accepted this long after the contact wrote. */
export const RESPONSE_WINDOW_MS = 24 * HOUR_MS;

/** Messenger/Instagram: after 24 h, a human agent may still answer with the HUMAN_AGENT tag for this long. */
export const HUMAN_AGENT_WINDOW_MS = 7 * 24 * HOUR_MS;

const WINDOWS: Record<string, number> = {
  whatsapp: RESPONSE_WINDOW_MS,
  'social_one.native': HUMAN_AGENT_WINDOW_MS,
  'social_two.native': HUMAN_AGENT_WINDOW_MS,
};

export function hasReplyWindow(integrationKey: string): boolean {
  return WINDOWS[integrationKey] !== undefined;
}

/**
 * Until when a free-form reply is accepted: null for a channel without a window. A thread on a
 * windowed channel whose contact never wrote has a window that already ended (the epoch).
 */
export function replyWindowEndsAt(integrationKey: string, lastInboundAt: Date | null): Date | null {
  const length = WINDOWS[integrationKey];
  if (length === undefined) return null;
  return new Date((lastInboundAt?.getTime() ?? 0) + length);
}

/**
 * Meta's Send API tagging for a reply sent at `now`: `RESPONSE` inside 24 h of the contact's
 * last message, then `MESSAGE_TAG` with `HUMAN_AGENT` (the refusal before queueing keeps
 * anything later from being sent).
 */
export function metaMessagingType(
  lastInboundAt: Date | null | undefined,
  now: Date,
): { messaging_type: 'RESPONSE' } | { messaging_type: 'MESSAGE_TAG'; tag: 'HUMAN_AGENT' } {
  if (lastInboundAt && now.getTime() - lastInboundAt.getTime() > RESPONSE_WINDOW_MS) {
    return { messaging_type: 'MESSAGE_TAG', tag: 'HUMAN_AGENT' };
  }
  return { messaging_type: 'RESPONSE' };
}
