import type { TenantClient, User } from '../client/client';
import { makeClient, setApiHooks } from './api';
import { createStore } from './store';

/**
 * The signed-in agent: the user, the client carrying their token, and the token's expiry.
 * Kept in localStorage with "remember me" (the session lives 30 days), else in
 * sessionStorage (this tab only). The token is refreshed before it expires (docs/auth.md);
 * a refresh or a revocation the service announces ends the old token, so whatever answers
 * 401 sends the agent back to sign-in only once the service confirms the session is gone.
 */
export interface Session {
  user: User;
  token: string;
  /** Unix seconds. */
  expiry: number;
  remember: boolean;
  client: TenantClient;
}

const KEY = 'inbox.session';
/** Refresh this long before the token expires. */
const REFRESH_AHEAD_MS = 5 * 60_000;

export const session = createStore<Session | null>(restore());
/** Why the agent is on the sign-in page again (shown there once). */
export const signedOutReason = createStore<string | null>(null);

function restore(): Session | null {
  for (const storage of [sessionStorage, localStorage]) {
    const raw = storage.getItem(KEY);
    if (!raw) continue;
    try {
      const saved = JSON.parse(raw) as Omit<Session, 'client'>;
      if (saved.expiry * 1000 > Date.now()) return { ...saved, client: makeClient(saved.token) };
    } catch {
      // A damaged entry is dropped below.
    }
    storage.removeItem(KEY);
  }
  return null;
}

function save(s: Session | null): void {
  localStorage.removeItem(KEY);
  sessionStorage.removeItem(KEY);
  if (!s) return;
  const { client: _client, ...saved } = s;
  (s.remember ? localStorage : sessionStorage).setItem(KEY, JSON.stringify(saved));
}

export async function signIn(email: string, password: string, remember: boolean): Promise<void> {
  const client = makeClient();
  const answer = await client.login({ email, password, remember });
  signedOutReason.set(null);
  session.set({ user: answer.data, token: answer.access_token, expiry: answer.token_expiry, remember, client });
}

/** Ends the session on the service too; the local session ends whatever the service says. */
export async function signOut(): Promise<void> {
  const current = session.get();
  session.set(null);
  await current?.client.logout().catch(() => undefined);
}

function endLocally(reason: string): void {
  if (!session.get()) return;
  signedOutReason.set(reason);
  session.set(null);
}

let refreshing: Promise<void> | null = null;

/** Replaces the token with a fresh one; the old one stops working (and its socket closes). */
export function refreshNow(): Promise<void> {
  const current = session.get();
  if (!current) return Promise.resolve();
  refreshing ??= current.client
    .refresh()
    .then((answer) => {
      if (session.get() !== current) return;
      session.set({ ...current, user: answer.data, token: answer.access_token, expiry: answer.token_expiry });
    })
    .catch((err: unknown) => {
      if ((err as { status?: number }).status === 401) endLocally('Your session has ended. Please sign in again.');
    })
    .finally(() => {
      refreshing = null;
    });
  return refreshing;
}

/**
 * Asks the service whether the session is still live (after a 401 or a socket closed with
 * 4001): a 401 now means it really ended (signed out elsewhere, revoked, deactivated).
 */
export async function verifySession(): Promise<boolean> {
  const current = session.get();
  if (!current) return false;
  await (refreshing ?? Promise.resolve());
  const now = session.get();
  if (!now) return false;
  try {
    await now.client.me();
    return true;
  } catch (err) {
    if ((err as { status?: number }).status === 401 && session.get() === now) {
      endLocally('Your session has ended. Please sign in again.');
      return false;
    }
    return true;
  }
}

let timer: ReturnType<typeof setTimeout> | undefined;
/** Timers longer than ~24.8 days overflow, so a 30-day token is checked daily until its time comes. */
function scheduleRefresh(s: Session | null): void {
  clearTimeout(timer);
  if (!s) return;
  const due = s.expiry * 1000 - REFRESH_AHEAD_MS - Date.now();
  timer = setTimeout(
    () => (due <= 86_400_000 ? void refreshNow() : scheduleRefresh(session.get())),
    Math.max(5_000, Math.min(due, 86_400_000)),
  );
}
session.subscribe((s) => {
  save(s);
  scheduleRefresh(s);
});
scheduleRefresh(session.get());

setApiHooks({
  onUnauthorized(tokenUsed) {
    // A call made with a token a refresh has since replaced says nothing about the session.
    if (session.get()?.token === tokenUsed) void verifySession();
  },
});
