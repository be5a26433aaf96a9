import type { LoginResponse, TenantClient, User } from '../../../packages/client/src/index';
import { makeClient, setApiHooks } from './api';
import { createStore } from './store';

/**
 * The signed-in agent: the user, the client carrying their token, and the token's expiry.
 * No token is ever kept where a script could read it (docs/security.md, "The console's tokens
 * and files"): the access token lives in this module's memory only. Login also set an
 * `HttpOnly` refresh cookie (30 days with "remember me", else until the browser closes),
 * which only the refresh route reads; on load the console asks it for a token of the session.
 * The token is refreshed before it expires (docs/auth.md); whatever answers 401 sends the
 * agent back to sign-in only once neither the token nor the cookie holds a live session.
 */
export interface Session {
  user: User;
  token: string;
  /** Unix seconds. */
  expiry: number;
  remember: boolean;
  client: TenantClient;
}

/**
 * Whether the refresh cookie is worth asking for on load: `localStorage` after "remember me",
 * `sessionStorage` (this tab) otherwise, as the token itself once was. A flag, not a credential:
 * without the cookie it opens nothing.
 */
const RESUME = 'inbox.resume';
/** Where consoles before the refresh cookie kept the token itself: removed on sight. */
const OLD_KEY = 'inbox.session';
/** Refresh this long before the token expires. */
const REFRESH_AHEAD_MS = 5 * 60_000;

for (const storage of [localStorage, sessionStorage]) storage.removeItem(OLD_KEY);
const resumable = localStorage.getItem(RESUME) !== null || sessionStorage.getItem(RESUME) !== null;

export const session = createStore<Session | null>(null);
/** True while the console asks the refresh cookie for the session at start (nothing to show yet). */
export const restoring = createStore<boolean>(resumable);
/** Why the agent is on the sign-in page again (shown there once). */
export const signedOutReason = createStore<string | null>(null);
/** The workspace requires two-factor sign-in and this user has not turned it on: only its setup opens. */
export const twoFactorRequired = createStore<boolean>(false);

/**
 * The one client of every signed-in call, sending whatever token the session holds when the
 * call is made: a component that kept the client keeps working after the token is replaced.
 */
const client = makeClient(() => session.get()?.token);

const fromAnswer = (answer: LoginResponse, remember: boolean): Session => ({
  user: answer.data,
  token: answer.access_token,
  expiry: answer.token_expiry,
  remember,
  client,
});

/** A token of the cookie's session, or null when the service says there is none (401/403). */
async function fromCookie(remember: boolean): Promise<Session | null> {
  try {
    return fromAnswer(await makeClient().refresh(), remember);
  } catch (err) {
    const status = (err as { status?: number }).status;
    if (status === 401 || status === 403) return null;
    throw err;
  }
}

function save(s: Session | null): void {
  localStorage.removeItem(RESUME);
  sessionStorage.removeItem(RESUME);
  if (s) (s.remember ? localStorage : sessionStorage).setItem(RESUME, '1');
}

/** `otp`: a code of the authenticator app or a recovery code, when the first try answered `otp_required`. */
export async function signIn(email: string, password: string, remember: boolean, otp?: string): Promise<void> {
  const answer = await makeClient().login({ email, password, remember, ...(otp ? { otp } : {}) });
  signedOutReason.set(null);
  session.set(fromAnswer(answer, remember));
}

/**
 * Single sign-on's last step: the service's callback sent the browser to `/app#code=<auth_code>`;
 * the one-time code becomes a session, kept in memory like any other (not remembered).
 */
export async function signInWithCode(code: string): Promise<void> {
  const answer = await makeClient().generateToken(code);
  signedOutReason.set(null);
  session.set(fromAnswer(answer, false));
}

const signOutListeners = new Set<(userId: number) => void>();
/**
 * Called with the user's id when they sign out here by choice (Sign out), not when a session
 * ends by itself: what they leave in the tab (their drafts) goes with them.
 */
export function onSignOut(listener: (userId: number) => void): () => void {
  signOutListeners.add(listener);
  return () => signOutListeners.delete(listener);
}

/** Ends the session on the service too (which clears the cookie); the local session ends whatever the service says. */
export async function signOut(): Promise<void> {
  const current = session.get();
  session.set(null);
  if (current) for (const listener of [...signOutListeners]) listener(current.user.id);
  if (current)
    await makeClient(() => current.token)
      .logout()
      .catch(() => undefined);
}

function endLocally(reason: string): void {
  if (!session.get()) return;
  signedOutReason.set(reason);
  session.set(null);
}

const ENDED = 'Your session has ended. Please sign in again.';

/**
 * The token failed: another tab may have refreshed the session into a new one (and moved the
 * cookie with it), so the cookie is asked before the agent is sent back to sign-in.
 */
async function recover(current: Session): Promise<boolean> {
  const resumed = await fromCookie(current.remember).catch(() => undefined);
  if (session.get() !== current) return session.get() !== null;
  if (resumed) {
    session.set(resumed);
    return true;
  }
  // A network failure (undefined) says nothing about the session: it is kept.
  if (resumed === null) endLocally(ENDED);
  return resumed === undefined;
}

/** One refresh or check at a time: a burst of 401s asks the service once. */
let pending: Promise<boolean> | null = null;
function once(work: () => Promise<boolean>): Promise<boolean> {
  pending ??= work().finally(() => {
    pending = null;
  });
  return pending;
}

/**
 * Replaces the token with a fresh one of a new session (the contract's bearer refresh, which
 * extends the session and moves the cookie along); the old token stops working.
 */
export function refreshNow(): Promise<boolean> {
  const current = session.get();
  if (!current) return Promise.resolve(false);
  return once(async () => {
    try {
      const answer = await makeClient(() => current.token).refresh();
      if (session.get() === current) session.set(fromAnswer(answer, current.remember));
      return true;
    } catch (err) {
      if ((err as { status?: number }).status === 401) return recover(current);
      return true;
    }
  });
}

/**
 * Asks the service whether the session is still live (after a 401 or a socket closed with
 * 4001): a 401 now, and no session behind the cookie, means it really ended (signed out
 * elsewhere, revoked, deactivated).
 */
export function verifySession(): Promise<boolean> {
  const current = session.get();
  if (!current) return Promise.resolve(false);
  return once(async () => {
    try {
      await current.client.me();
      return true;
    } catch (err) {
      if ((err as { status?: number }).status === 401) return recover(current);
      return true;
    }
  });
}

/**
 * A call of the signed-in agent that the service refused with 401 because the token ended
 * under it (another tab's refresh, a laptop that slept past the expiry) is made once more when
 * the session lives on under a new token; a 401 changed nothing on the service.
 */
export async function renewing<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if ((err as { status?: number }).status === 401 && (await verifySession())) return call();
    throw err;
  }
}

let timer: ReturnType<typeof setTimeout> | undefined;
/**
 * Timers longer than ~24.8 days overflow, so a 30-day token is checked daily until its time
 * comes. A refresh that left the token as it was (offline, or a check was under way) is tried
 * again 5 s later.
 */
function scheduleRefresh(s: Session | null): void {
  clearTimeout(timer);
  if (!s) return;
  const due = s.expiry * 1000 - REFRESH_AHEAD_MS - Date.now();
  const retryUnchanged = () => {
    if (session.get() === s) scheduleRefresh(s);
  };
  timer = setTimeout(
    () => (due <= 86_400_000 ? void refreshNow().then(retryUnchanged) : scheduleRefresh(session.get())),
    Math.max(5_000, Math.min(due, 86_400_000)),
  );
}
session.subscribe((s) => {
  if (!s) twoFactorRequired.set(false);
  save(s);
  scheduleRefresh(s);
});

setApiHooks({
  onUnauthorized(tokenUsed) {
    // A call made with a token a refresh has since replaced says nothing about the session.
    if (session.get()?.token === tokenUsed) void verifySession();
  },
  onTwoFactorRequired() {
    if (session.get()) twoFactorRequired.set(true);
  },
});

// A reload: the cookie (when there is one worth asking) gives this tab a token of the session.
if (resumable) {
  const remember = localStorage.getItem(RESUME) !== null;
  void fromCookie(remember)
    .then(
      (resumed) => {
        if (resumed && !session.get()) session.set(resumed);
        else if (!resumed) save(session.get());
      },
      () => undefined,
    )
    .finally(() => restoring.set(false));
}
