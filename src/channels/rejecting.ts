import type { IntegrationKey } from '../config.js';
import type { ChannelAdapter } from './channel.js';

/**
 * `livechat` and `ai` are not provider webhooks: live chat has its own routes (src/livechat/)
 * and the AI integration never receives. Their deliveries are always refused and normalise to
 * nothing, by design (docs/webhooks.md, "Integrations"); a 401 on `/webhooks/livechat` is expected.
 */
export function rejectingAdapter(key: Extract<IntegrationKey, 'livechat' | 'ai'>): ChannelAdapter {
  return {
    key,
    challenge: () => null,
    verify: () => ({ ok: false }),
    eventName: () => undefined,
    normalise: () => [],
  };
}
