import type { AiRewriteInstruction, AiSuggestion } from '../../../packages/client/src/index';
import { errorText, InboxClientError, postEventStream, unanswered } from '../shared/api';
import { session } from '../shared/session';
import { createStore } from '../shared/store';

/**
 * Whether the workspace's AI assist is on (`ai.enabled` of `GET /v1/workspace`, which agents
 * may read): null until read. Read once per session; the AI settings page sets it when an
 * admin saves, and a `409 ai_disabled` answer turns it off, so the buttons go away as soon as
 * the service says they can do nothing.
 */
export const aiEnabled = createStore<boolean | null>(null);
let loading: Promise<void> | null = null;

export function wantAi(): void {
  const client = session.get()?.client;
  if (aiEnabled.get() !== null || !client || loading) return;
  loading = client
    .workspace()
    .then((w) => aiEnabled.set(w.ai.enabled))
    .catch(() => undefined)
    .finally(() => {
      loading = null;
    });
}

session.subscribe((s) => {
  if (!s) aiEnabled.set(null);
});

/** The composer's "Rewrite" choices, in the order the menu shows them. */
export const REWRITES: [instruction: AiRewriteInstruction, label: string][] = [
  ['shorter', 'Shorter'],
  ['friendlier', 'Friendlier'],
  ['formal', 'More formal'],
  ['fix', 'Fix spelling and grammar'],
];

/**
 * What an agent reads when the model could not help. The service's 502 message names what
 * happened (a status, a timeout), never the provider's words, so it is shown as it is.
 */
export function aiErrorText(err: unknown): string {
  if (err instanceof InboxClientError && !unanswered(err)) {
    if (err.code === 'ai_disabled') {
      aiEnabled.set(false);
      return 'AI assist is off for this workspace.';
    }
    if (err.status === 429)
      return `Too many AI requests in this workspace just now${err.retryAfter ? `: try again in ${err.retryAfter} s` : ''}.`;
    if (err.code === 'ai_unavailable') return `The model could not answer (${err.message.replace(/^.*?: /, '')}).`;
  }
  return errorText(err);
}

/**
 * `POST /v1/threads/:id/ai/suggest-reply` as a stream: `onText` gets the draft so far as the
 * model writes it, so a slow local model shows its words at once. The end is the whole
 * suggestion (with its `sources`); an `error` event, or an error answer, throws.
 */
export async function streamSuggestion(threadId: number, onText: (soFar: string) => void): Promise<AiSuggestion> {
  let soFar = '';
  let finished: AiSuggestion | undefined;
  const answer = await postEventStream(session.get()?.token, `/v1/threads/${threadId}/ai/suggest-reply`, {}, (name, data) => {
    if (name === 'delta') {
      soFar += (data as { text: string }).text;
      onText(soFar);
    } else if (name === 'done') {
      finished = data as AiSuggestion;
    } else if (name === 'error') {
      const error = (data as { error: { code: string; message: string } }).error;
      throw new InboxClientError(error.code, error.code === 'ai_unavailable' ? 502 : 500, error.message);
    }
  });
  const suggestion = finished ?? (answer as AiSuggestion | undefined);
  if (!suggestion) throw new InboxClientError('malformed_response', 502, 'the suggestion ended before it was complete');
  return suggestion;
}
