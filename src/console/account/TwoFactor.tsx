import { useState } from 'preact/hooks';
import type { TwoFactorSetup } from '../../../packages/client/src/index';
import { errorText, InboxClientError, retryAfterOf } from '../shared/api';
import { duration } from '../shared/format';
import { session, twoFactorRequired } from '../shared/session';
import { useStore } from '../shared/store';
import { useLoad } from '../shared/use-load';
import { QrCode } from './QrCode';

/**
 * Two-factor sign-in on the account page (docs/security.md): set it up with an authenticator
 * app (the QR code is drawn in the page), confirm with a code, and see the recovery codes once.
 */
export function TwoFactor() {
  const s = useStore(session)!;
  const status = useLoad(() => s.client.twoFactor(), []);
  const [setup, setSetup] = useState<TwoFactorSetup | null>(null);
  const [code, setCode] = useState('');
  const [password, setPassword] = useState('');
  const [recoveryCodes, setRecoveryCodes] = useState<string[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function run(action: () => Promise<void>, explain: (err: unknown) => string | null = () => null) {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      const wait = retryAfterOf(err);
      setError(wait !== null ? `Too many wrong codes. Try again in ${duration(wait)}.` : (explain(err) ?? errorText(err)));
    } finally {
      setBusy(false);
    }
  }

  const enabled = status.data?.enabled ?? false;
  return (
    <section class="settings-form" aria-labelledby="twofactor-title">
      <h3 id="twofactor-title">Two-factor sign-in</h3>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {recoveryCodes ? (
        <>
          <p class="notice" role="status">
            Two-factor sign-in is on. Keep these recovery codes somewhere safe: each signs you in once without your phone. They are shown
            only now.
          </p>
          <ul class="recovery-codes" aria-label="Recovery codes">
            {recoveryCodes.map((c) => (
              <li key={c}>
                <code>{c}</code>
              </li>
            ))}
          </ul>
          <button
            type="button"
            class="primary"
            onClick={() => {
              setRecoveryCodes(null);
              // Only now: where the workspace requires it, the rest of the console opens and this page goes.
              twoFactorRequired.set(false);
              void status.reload();
            }}
          >
            I have saved them
          </button>
        </>
      ) : status.data === null ? (
        <p aria-busy={status.error ? undefined : 'true'}>{status.error ?? 'Loading…'}</p>
      ) : enabled ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run(
              async () => {
                await s.client.disableTwoFactor(password);
                setPassword('');
                void status.reload();
              },
              (err) => (err instanceof InboxClientError && err.status === 403 ? 'Your password is not right.' : null),
            );
          }}
        >
          <p>
            On. {status.data.recoveryCodesLeft} recovery {status.data.recoveryCodesLeft === 1 ? 'code' : 'codes'} left.
          </p>
          <label>
            Your password, to turn it off
            <input
              type="password"
              autocomplete="current-password"
              required
              value={password}
              onInput={(e) => setPassword(e.currentTarget.value)}
            />
          </label>
          <button type="submit" disabled={busy}>
            Turn off two-factor sign-in
          </button>
        </form>
      ) : setup ? (
        <form
          onSubmit={(e) => {
            e.preventDefault();
            void run(
              async () => {
                const answer = await s.client.enableTwoFactor(code.trim());
                setCode('');
                setSetup(null);
                setRecoveryCodes(answer.recoveryCodes);
              },
              (err) =>
                err instanceof InboxClientError && err.status === 422 ? 'That code is not right. Type the one your app shows now.' : null,
            );
          }}
        >
          <p>Scan this code with an authenticator app (or type the key below into it), then type the 6-digit code it shows.</p>
          <QrCode text={setup.otpauthUrl} label="QR code for your authenticator app" />
          <p>
            Key: <code class="totp-key">{setup.secret}</code>
          </p>
          <label>
            Code from the app
            <input
              inputMode="numeric"
              autocomplete="one-time-code"
              pattern="\s*[0-9]{3}[ \-]?[0-9]{3}\s*"
              title="The 6 digits your app shows (a space between the two groups is fine)"
              maxLength={20}
              required
              value={code}
              onInput={(e) => setCode(e.currentTarget.value)}
            />
          </label>
          <button type="submit" class="primary" disabled={busy}>
            Turn on
          </button>
        </form>
      ) : (
        <>
          <p>Off. With it on, signing in asks for a code from an app on your phone as well as your password.</p>
          <button
            type="button"
            class="primary"
            disabled={busy}
            onClick={() => void run(async () => setSetup(await s.client.setupTwoFactor()))}
          >
            Set up two-factor sign-in
          </button>
        </>
      )}
    </section>
  );
}
