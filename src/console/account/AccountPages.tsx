import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { errorText, InboxClientError, makeClient, retryAfterOf } from '../shared/api';
import { duration } from '../shared/format';
import { navigate, onLinkClick } from '../shared/router';
import { signIn } from '../shared/session';

/** What a person chooses (docs/accounts.md): the service says the same, this saves a round trip. */
export const PASSWORD_MIN = 12;

/**
 * The token of a link (`#token=…`), read once: the fragment is then taken out of the address
 * bar and the history, so the token is not left where the next person at the screen finds it.
 */
function useLinkToken(): string | null {
  const read = () => new URLSearchParams(location.hash.slice(1)).get('token');
  const [token, setToken] = useState(read);
  useEffect(() => {
    const take = () => {
      const found = read();
      if (found) setToken(found);
      if (location.hash) history.replaceState(null, '', location.pathname);
    };
    take();
    // A second link opened in the same tab changes only the fragment: no page load.
    addEventListener('hashchange', take);
    return () => removeEventListener('hashchange', take);
  }, []);
  return token;
}

/** Why a link's call failed, in words for the person holding the link. */
function linkError(err: unknown): string {
  if (err instanceof InboxClientError && err.status === 401) return 'This link is invalid, used or expired. Ask for a new one.';
  if (err instanceof InboxClientError && err.code === 'mail_unavailable')
    return 'This service cannot send e-mail yet. Ask your administrator to reset your password (inbox reset-password).';
  const wait = retryAfterOf(err);
  if (wait !== null) return `Too many requests for this address. Try again in ${duration(wait)}.`;
  // The service names the field ("newPassword: must not be…"); the form around it already does.
  const text = errorText(err).replace(/^[a-zA-Z]+: /, '');
  return `${text.charAt(0).toUpperCase()}${text.slice(1)}${/[.!?]$/.test(text) ? '' : '.'}`;
}

/** The page around every form here: the sign-in card. */
function Card({ title, children, onSubmit }: { title: string; children: ComponentChildren; onSubmit?: (e: Event) => void }) {
  return (
    <main class="signin">
      <form class="signin-card" onSubmit={onSubmit} aria-labelledby="account-title">
        <h1 id="account-title">{title}</h1>
        {children}
      </form>
    </main>
  );
}

function Alert({ error }: { error: string | null }) {
  return error ? (
    <p class="error" role="alert">
      {error}
    </p>
  ) : null;
}

const SignInLink = () => (
  <a href="/app/" onClick={(e) => onLinkClick(e, '/')}>
    Back to sign in
  </a>
);

/** A new password typed twice; the second must match before anything is sent. */
function NewPasswordFields(props: { password: string; again: string; onPassword(v: string): void; onAgain(v: string): void }) {
  return (
    <>
      <label for="new-password">New password</label>
      <input
        id="new-password"
        type="password"
        autocomplete="new-password"
        required
        minLength={PASSWORD_MIN}
        aria-describedby="new-password-rule"
        value={props.password}
        onInput={(e) => props.onPassword(e.currentTarget.value)}
      />
      <small id="new-password-rule">At least {PASSWORD_MIN} characters, not your e-mail address.</small>
      <label for="new-password-again">Type it again</label>
      <input
        id="new-password-again"
        type="password"
        autocomplete="new-password"
        required
        value={props.again}
        onInput={(e) => props.onAgain(e.currentTarget.value)}
      />
    </>
  );
}

/** Signs in with what the person just chose and opens the inbox; on failure, the sign-in page. */
async function enter(email: string, password: string) {
  try {
    await signIn(email, password, false);
  } finally {
    navigate('/', { replace: true });
  }
}

/** `/app/reset`: ask for a link (no token), or choose a new password (with one). */
export function ResetPage() {
  const token = useLinkToken();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [sent, setSent] = useState<string | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function run(action: () => Promise<void>) {
    setBusy(true);
    setError(null);
    try {
      await action();
    } catch (err) {
      setError(linkError(err));
    } finally {
      setBusy(false);
    }
  }

  if (!token) {
    return (
      <Card
        title="Reset your password"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            await makeClient().requestPasswordReset({ email: email.trim() });
            setSent(`If ${email.trim()} has an account, a link to reset its password is on its way. It works once, for 1 hour.`);
          });
        }}
      >
        <Alert error={error} />
        {sent ? (
          <p class="notice" role="status">
            {sent}
          </p>
        ) : (
          <>
            <p>Type the e-mail address you sign in with. We will mail you a link to choose a new password.</p>
            <label for="reset-email">E-mail</label>
            <input
              id="reset-email"
              type="email"
              autocomplete="username"
              required
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
            <button type="submit" class="primary" disabled={busy}>
              Send the link
            </button>
          </>
        )}
        <SignInLink />
      </Card>
    );
  }

  return (
    <Card
      title="Choose a new password"
      onSubmit={(e) => {
        e.preventDefault();
        if (password !== again) return setError('The two passwords differ.');
        void run(async () => {
          const user = await makeClient().confirmPasswordReset({ token, newPassword: password });
          setDone('Your password is set. Every device signed in to your account was signed out.');
          await enter(user.email, password);
        });
      }}
    >
      <Alert error={error} />
      {done ? (
        <p class="notice" role="status">
          {done}
        </p>
      ) : (
        <>
          <NewPasswordFields password={password} again={again} onPassword={setPassword} onAgain={setAgain} />
          <button type="submit" class="primary" disabled={busy}>
            Set my password
          </button>
        </>
      )}
      <SignInLink />
    </Card>
  );
}

/** `/app/invite`: the invited person chooses their password and is signed in. */
export function InvitePage() {
  const token = useLinkToken();
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(token ? null : 'This page opens from the link in your invite mail.');
  const [busy, setBusy] = useState(false);

  async function submit(e: Event) {
    e.preventDefault();
    if (!token) return;
    if (password !== again) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      const user = await makeClient().acceptInvite({ token, password });
      await enter(user.email, password);
    } catch (err) {
      setError(linkError(err));
      setBusy(false);
    }
  }

  return (
    <Card title="Join your team" onSubmit={submit}>
      <Alert error={error} />
      <p>Choose the password you will sign in with.</p>
      <NewPasswordFields password={password} again={again} onPassword={setPassword} onAgain={setAgain} />
      <button type="submit" class="primary" disabled={busy || !token}>
        Accept the invite
      </button>
    </Card>
  );
}

/** `/app/setup`: the first run, while no workspace exists. */
export function SetupPage() {
  const token = useLinkToken();
  const [open, setOpen] = useState<boolean | null>(null);
  const [form, setForm] = useState({ workspaceName: '', name: '', email: '' });
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    makeClient()
      .setupStatus()
      .then((s) => setOpen(s.open))
      .catch((err: unknown) => setError(errorText(err)));
  }, []);

  async function submit(e: Event) {
    e.preventDefault();
    if (!token) return;
    if (password !== again) return setError('The two passwords differ.');
    setBusy(true);
    setError(null);
    try {
      const done = await makeClient().setup({ token, ...form, email: form.email.trim(), password });
      await enter(done.user.email, password);
    } catch (err) {
      if (err instanceof InboxClientError && err.status === 409) setOpen(false);
      else setError(linkError(err));
      setBusy(false);
    }
  }

  if (open === false) {
    return (
      <Card title="Inbox is set up">
        <p class="notice" role="status">
          A workspace exists already, so this page is closed. Sign in, or ask an admin of your workspace to invite you.
        </p>
        <SignInLink />
      </Card>
    );
  }
  return (
    <Card title="Set up Inbox" onSubmit={submit}>
      <Alert error={error ?? (token ? null : 'This page opens from the setup link the service logged at start.')} />
      <p>Name your workspace and create its first admin: you.</p>
      <label for="setup-workspace">Workspace name</label>
      <input
        id="setup-workspace"
        required
        maxLength={200}
        value={form.workspaceName}
        onInput={(e) => setForm({ ...form, workspaceName: e.currentTarget.value })}
      />
      <label for="setup-name">Your name</label>
      <input
        id="setup-name"
        required
        maxLength={200}
        autocomplete="name"
        value={form.name}
        onInput={(e) => setForm({ ...form, name: e.currentTarget.value })}
      />
      <label for="setup-email">Your e-mail</label>
      <input
        id="setup-email"
        type="email"
        required
        autocomplete="username"
        value={form.email}
        onInput={(e) => setForm({ ...form, email: e.currentTarget.value })}
      />
      <NewPasswordFields password={password} again={again} onPassword={setPassword} onAgain={setAgain} />
      <button type="submit" class="primary" disabled={busy || !token || open === null}>
        Create the workspace
      </button>
    </Card>
  );
}

/** The page a link opens, whoever is signed in, or null for every other path. */
export function accountPage(path: string) {
  if (path === '/reset') return <ResetPage />;
  if (path === '/invite') return <InvitePage />;
  if (path === '/setup') return <SetupPage />;
  return null;
}
