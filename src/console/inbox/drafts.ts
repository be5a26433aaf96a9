import { onSignOut, session } from '../shared/session';

/**
 * Drafts per conversation, kept in sessionStorage: switching threads, a lost connection, a
 * reload or a session that ended mid-reply (signing in again) never loses what an agent was
 * typing. They are the agent's own: kept under their user id, so whoever signs in next in the
 * same tab never sees (or sends) them, and forgotten when the agent signs out. A draft's
 * idempotency key is made when it is first sent and kept until the service has answered, so a
 * retry can never send it twice.
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

const PREFIX = 'inbox.drafts';
/** Where consoles before per-user drafts kept everyone's: nobody's to show, removed on sight. */
sessionStorage.removeItem(PREFIX);

const keyOf = (userId: number) => `${PREFIX}.${userId}`;
const signedInUser = () => session.get()?.user.id;

function all(userId: number | undefined): Record<string, Draft> {
  if (userId === undefined) return {};
  try {
    return JSON.parse(sessionStorage.getItem(keyOf(userId)) ?? '{}') as Record<string, Draft>;
  } catch {
    return {};
  }
}

export const draftOf = (threadId: number): Draft => all(signedInUser())[threadId] ?? { text: '', note: false };

export function saveDraft(threadId: number, draft: Draft): void {
  const userId = signedInUser();
  if (userId === undefined) return;
  const drafts = all(userId);
  if (!draft.text && !draft.note && !draft.idempotencyKey) delete drafts[threadId];
  else drafts[threadId] = draft;
  if (Object.keys(drafts).length === 0) sessionStorage.removeItem(keyOf(userId));
  else sessionStorage.setItem(keyOf(userId), JSON.stringify(drafts));
}

// Signing out (not a session that ended by itself) leaves nothing of the agent's words behind.
onSignOut((userId) => sessionStorage.removeItem(keyOf(userId)));
