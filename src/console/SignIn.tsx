import { useState } from 'preact/hooks';
import { errorText, InboxClientError, retryAfterOf } from './shared/api';
import { duration } from './shared/format';
import { onLinkClick } from './shared/router';
import { signedOutReason, signIn } from './shared/session';
import { useStore } from './shared/store';

/**
 * The sign-in page: e-mail, password, "remember me". A refused attempt keeps the e-mail. With
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
      else if (err instanceof InboxClientError && err.status === 401) setError('Wrong e-mail or password.');
      else setError(errorText(err));
      if (otpStep) setOtp('');
      else setPassword('');
    } finally {
      setBusy(false);
    }
  }

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
            <a href="/app/reset" onClick={(e) => onLinkClick(e, '/reset')}>
              Forgot your password?
            </a>
          </>
        )}
      </form>
    </main>
  );
}
