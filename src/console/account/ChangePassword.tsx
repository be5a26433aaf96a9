import { useState } from 'preact/hooks';
import { errorText, InboxClientError, retryAfterOf } from '../shared/api';
import { holdFocus } from '../shared/focus';
import { duration } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { PASSWORD_MIN } from './AccountPages';
import { TwoFactor } from './TwoFactor';
import '../settings/settings.css';

/** `/app/account`: the signed-in person's own account: their password and two-factor sign-in. */
export function ChangePassword() {
  const s = useStore(session)!;
  const [current, setCurrent] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    setDone(null);
    if (password !== again) return setError('The two new passwords differ.');
    const giveFocusBack = holdFocus();
    setBusy(true);
    setError(null);
    try {
      const { endedSessions } = await s.client.changePassword({ currentPassword: current, newPassword: password });
      setDone(
        endedSessions === 0
          ? 'Your password is changed.'
          : `Your password is changed. ${endedSessions === 1 ? 'One other device was' : `${endedSessions} other devices were`} signed out.`,
      );
      setCurrent('');
      setPassword('');
      setAgain('');
    } catch (err) {
      const wait = retryAfterOf(err);
      if (wait !== null) setError(`Too many wrong passwords. Try again in ${duration(wait)}.`);
      else if (err instanceof InboxClientError && err.status === 403) setError('Your current password is not right.');
      else setError(errorText(err));
    } finally {
      setBusy(false);
      giveFocusBack();
    }
  }

  return (
    <section class="settings-page" aria-labelledby="account-title">
      <h2 id="account-title">Your account</h2>
      <p>
        Signed in as {s.user.name} ({s.user.email}).
      </p>
      <form class="settings-form" onSubmit={submit} aria-labelledby="password-title">
        <h3 id="password-title">Change your password</h3>
        {error && (
          <p class="error" role="alert">
            {error}
          </p>
        )}
        {done && (
          <p class="notice" role="status">
            {done}
          </p>
        )}
        <label>
          Current password
          <input
            type="password"
            autocomplete="current-password"
            required
            value={current}
            onInput={(e) => setCurrent(e.currentTarget.value)}
          />
        </label>
        <label>
          New password
          <input
            type="password"
            autocomplete="new-password"
            required
            minLength={PASSWORD_MIN}
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <label>
          New password, again
          <input type="password" autocomplete="new-password" required value={again} onInput={(e) => setAgain(e.currentTarget.value)} />
        </label>
        <small>
          At least {PASSWORD_MIN} characters, not your e-mail address. Every other device signed in to your account will be signed out.
        </small>
        <button type="submit" class="primary" disabled={busy}>
          Change password
        </button>
      </form>
      <TwoFactor />
    </section>
  );
}
