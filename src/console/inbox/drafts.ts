/**
 * Drafts per conversation, kept in sessionStorage: switching threads, a lost connection or a
 * reload never loses what an agent was typing. A draft's idempotency key is made when it is
 * first sent and kept until the service has answered, so a retry can never send it twice.
 */
export interface Draft {
  text: string;
  note: boolean;
  /** E-mail threads: Cc and Bcc as typed (comma-separated); an empty Cc keeps the last mail's. */
  cc?: string;
  bcc?: string;
  /** Set while a send is under way or failed to reach the service. */
  idempotencyKey?: string;
}

const KEY = 'inbox.drafts';

function all(): Record<string, Draft> {
  try {
    return JSON.parse(sessionStorage.getItem(KEY) ?? '{}') as Record<string, Draft>;
  } catch {
    return {};
  }
}

export const draftOf = (threadId: number): Draft => all()[threadId] ?? { text: '', note: false };

export function saveDraft(threadId: number, draft: Draft): void {
  const drafts = all();
  if (!draft.text && !draft.note && !draft.idempotencyKey) delete drafts[threadId];
  else drafts[threadId] = draft;
  sessionStorage.setItem(KEY, JSON.stringify(drafts));
}
