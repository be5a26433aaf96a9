import { useEffect, useRef, useState } from 'preact/hooks';
import { errorText, InboxClientError, retryAfterOf } from './shared/api';
import { duration } from './shared/format';
import { onLinkClick } from './shared/router';
import { signedOutReason, signIn, signInWithCode } from './shared/session';
import { useStore } from './shared/store';

/** The workspace a browser last signed in to with single sign-on: a convenience, not a credential. */
const SSO_WORKSPACE = 'inbox.ssoWorkspace';

/**
 * The sign-in page: e-mail, password, "remember me". "Single sign-on (SSO)" asks for the workspace
 * number and goes to the service's single sign-on start, which comes back to `/app#code=…`:
 * that one-time code is exchanged here. A refused attempt keeps the e-mail. With
 * two-factor sign-in on, the service answers `otp_required` and a second step asks for a code
 * of the authenticator app or a recovery code (the password stays in this page's memory only).
 */
export function SignIn() {
  const reason = useStore(signedOutReason);
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [remember, setRemember] = useState(false);
  const [otpStep, setOtpStep] = useState(false);
  const [otp, setOtp] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [ssoStep, setSsoStep] = useState(false);
  const [workspace, setWorkspace] = useState(() => localStorage.getItem(SSO_WORKSPACE) ?? '');

  useEffect(() => {
    const code = /^#code=([\w%-]+)$/.exec(location.hash)?.[1];
    if (!code) return;
    // The code works once: it leaves the address bar (and the history) before it is spent.
    history.replaceState(null, '', location.pathname);
    setBusy(true);
    signInWithCode(decodeURIComponent(code))
      .catch(() => setError('Single sign-on did not finish. Please try again.'))
      .finally(() => setBusy(false));
  }, []);

  // A step's form replaces the one whose field or button had the focus: its first field takes it,
  // so a keyboard (or a screen reader) goes on from there, not from the top of the page.
  const firstRender = useRef(true);
  useEffect(() => {
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    document.getElementById(ssoStep ? 'signin-workspace' : otpStep ? 'signin-otp' : 'signin-email')?.focus();
  }, [otpStep, ssoStep]);

  function startSso(event: Event) {
    event.preventDefault();
    const id = workspace.trim();
    localStorage.setItem(SSO_WORKSPACE, id);
    location.assign(`/auth/sso/${encodeURIComponent(id)}/start`);
  }

  async function submit(event: Event) {
    event.preventDefault();
    setBusy(true);
    setError(null);
    try {
      await signIn(email.trim(), password, remember, otpStep ? otp.trim() : undefined);
    } catch (err) {
      const wait = retryAfterOf(err);
      if (err instanceof InboxClientError && err.code === 'otp_required') return setOtpStep(true);
      if (wait !== null) setError(`Too many failed attempts. Try again in ${duration(wait)}.`);
      else if (otpStep && err instanceof InboxClientError && err.status === 401) setError('That code is not right.');
      else if (err instanceof InboxClientError && err.code === 'sso_required')
        setError('Your workspace signs in with single sign-on: use “Single sign-on (SSO)”.');
      else if (err instanceof InboxClientError && err.status === 401) setError('Wrong e-mail or password.');
      else setError(errorText(err));
      if (otpStep) setOtp('');
      else setPassword('');
      // The field to type again has the focus (the button pressed was disabled while waiting).
      document.getElementById(otpStep ? 'signin-otp' : 'signin-password')?.focus();
    } finally {
      setBusy(false);
    }
  }

  if (ssoStep)
    return (
      <main class="signin">
        <form class="signin-card" onSubmit={startSso} aria-labelledby="signin-title">
          <h1 id="signin-title">Sign in with SSO</h1>
          <label for="signin-workspace">Workspace number</label>
          <input
            id="signin-workspace"
            inputMode="numeric"
            pattern="[0-9]+"
            required
            aria-describedby="signin-workspace-help"
            value={workspace}
            onInput={(e) => setWorkspace(e.currentTarget.value)}
          />
          <small id="signin-workspace-help">Your admin finds it under Settings; you then sign in with your company’s account.</small>
          <button type="submit" class="primary">
            Continue
          </button>
          <button type="button" class="link" onClick={() => setSsoStep(false)}>
            Back
          </button>
        </form>
      </main>
    );

  return (
    <main class="signin">
      <form class="signin-card" onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Inbox</h1>
        {reason && !error && (
          <p class="notice" role="status">
            {reason}
          </p>
        )}
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {otpStep ? (
          <>
            <label for="signin-otp">Code from your authenticator app</label>
            <input
              id="signin-otp"
              autocomplete="one-time-code"
              required
              maxLength={64}
              aria-describedby="signin-otp-help"
              value={otp}
              onInput={(e) => setOtp(e.currentTarget.value)}
            />
            <small id="signin-otp-help">The 6 digits your app shows, or one of your recovery codes.</small>
            <button type="submit" class="primary" disabled={busy}>
              Verify
            </button>
            <button
              type="button"
              class="link"
              onClick={() => {
                setOtpStep(false);
                setOtp('');
                setPassword('');
                setError(null);
              }}
            >
              Back
            </button>
          </>
        ) : (
          <>
            <label for="signin-email">E-mail</label>
            <input
              id="signin-email"
              type="email"
              autocomplete="username"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
            <label for="signin-password">Password</label>
            <input
              id="signin-password"
              type="password"
              autocomplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
            <label class="check">
              <input type="checkbox" checked={remember} onChange={(e) => setRemember(e.currentTarget.checked)} />
              Remember me for 30 days
            </label>
            <button type="submit" class="primary" disabled={busy}>
              Sign in
            </button>
            {/* Not "Sign in with SSO": the password form's own button is "Sign in". */}
            <button type="button" onClick={() => setSsoStep(true)}>
              Single sign-on (SSO)
            </button>
            <a href="/app/reset" onClick={(e) => onLinkClick(e, '/reset')}>
              Forgot your password?
            </a>
          </>
        )}
      </form>
    </main>
  );
}
