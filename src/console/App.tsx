import { useEffect, useState } from 'preact/hooks';
import { accountPage } from './account/AccountPages';
import { ChangePassword } from './account/ChangePassword';
import { TwoFactor } from './account/TwoFactor';
import { ConversationList, openThread } from './inbox/ConversationList';
import { Shortcuts } from './inbox/Shortcuts';
import { neighbour, Transcript } from './inbox/Transcript';
import { Reports } from './reports/Reports';
import { SignIn } from './SignIn';
import { Settings } from './settings/Settings';
import { connection } from './shared/realtime';
import { navigate, onLinkClick, route, threadIdOf } from './shared/router';
import { restoring, session, signOut, twoFactorRequired } from './shared/session';
import { useStore } from './shared/store';
import { wantTeam } from './shared/team';
import { BellMenu } from './team/Bell';
import { StatusMenu } from './team/StatusMenu';

const typing = (el: EventTarget | null) =>
  el instanceof HTMLElement && (el.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(el.tagName));

export function App() {
  const s = useStore(session);
  const waking = useStore(restoring);
  const path = useStore(route);
  const link = useStore(connection);
  const needsTwoFactor = useStore(twoFactorRequired);
  const [help, setHelp] = useState(false);
  const threadId = threadIdOf(path);
  // A link's page (reset, invite, setup) opens whoever is signed in, and without a session.
  const linkPage = accountPage(path);

  // j/k/r/e/? anywhere but in a field (docs/console.md, "Keyboard").
  useEffect(() => {
    if (!s) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.ctrlKey || e.metaKey || e.altKey || typing(e.target) || document.querySelector('dialog[open]')) return;
      if (e.key === 'j' || e.key === 'k') {
        // Only where the list is: the settings, reports and account pages have none to move in.
        if (!document.querySelector('.list-pane')) return;
        const next = neighbour(threadIdOf(route.get()), e.key === 'j' ? 1 : -1);
        if (next !== null) openThread(next);
      } else if (e.key === 'r') {
        const box = document.getElementById('reply-box');
        if (box) {
          e.preventDefault();
          box.focus();
        }
      } else if (e.key === 'e') {
        document.querySelector<HTMLButtonElement>('[data-action="resolve"]')?.click();
      } else if (e.key === '?') {
        setHelp(true);
      } else return;
      e.preventDefault();
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [Boolean(s)]);

  // The status menu, the bell's names and the @ picker read the team.
  useEffect(() => {
    if (s) wantTeam();
  }, [s?.user.id]);

  // A reload keeps its address while the refresh cookie is asked for the session.
  useEffect(() => {
    if (!s && !waking && path !== '/' && !linkPage) navigate('/', { replace: true });
  }, [Boolean(s), waking]);

  if (linkPage) return linkPage;

  if (!s && waking)
    return (
      <main class="signin" aria-busy="true">
        <p class="notice" role="status">
          Signing in…
        </p>
      </main>
    );
  if (!s) return <SignIn />;
  if (needsTwoFactor)
    return (
      <main id="main" class="main">
        <section class="settings-page" aria-labelledby="required-title">
          <h1 id="required-title">Set up two-factor sign-in</h1>
          <p class="notice" role="status">
            Your workspace requires two-factor sign-in. Set it up to open the inbox.
          </p>
          <TwoFactor />
          <button type="button" onClick={() => void signOut()}>
            Sign out
          </button>
        </section>
      </main>
    );
  const settings = /^\/settings(?:\/([a-z-]+))?/.exec(path);
  const admin = s.user.roles.includes('admin');
  // The service refuses an agent's report calls anyway (403); the console does not offer them.
  const reports = path === '/reports' && admin;
  return (
    <div class="shell">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <header class="topbar">
        <a href="/app/" class="brand" onClick={(e) => onLinkClick(e, '/')}>
          Inbox
        </a>
        <nav aria-label="Main">
          <a href="/app/" aria-current={!settings && !reports ? 'page' : undefined} onClick={(e) => onLinkClick(e, '/')}>
            Conversations
          </a>
          {admin && (
            <a href="/app/reports" aria-current={reports ? 'page' : undefined} onClick={(e) => onLinkClick(e, '/reports')}>
              Reports
            </a>
          )}
          {admin && (
            <a
              href="/app/settings/connections"
              aria-current={settings ? 'page' : undefined}
              onClick={(e) => onLinkClick(e, '/settings/connections')}
            >
              Settings
            </a>
          )}
        </nav>
        <StatusMenu />
        <BellMenu />
        <a
          href="/app/account"
          class="me"
          aria-current={path === '/account' ? 'page' : undefined}
          onClick={(e) => onLinkClick(e, '/account')}
        >
          {s.user.name}
        </a>
        <button type="button" class="link shortcuts-button" onClick={() => setHelp(true)} aria-label="Keyboard shortcuts">
          ?
        </button>
        <button type="button" onClick={() => void signOut()}>
          Sign out
        </button>
      </header>
      {link === 'lost' && (
        <p class="banner" role="status">
          Connection lost. Reconnecting… Your drafts are kept.
        </p>
      )}
      <main id="main" class={settings || reports || path === '/account' ? 'main' : threadId ? 'main inbox has-thread' : 'main inbox'}>
        {path === '/account' ? (
          <ChangePassword />
        ) : reports ? (
          <Reports />
        ) : settings ? (
          <Settings page={settings[1] ?? 'connections'} />
        ) : (
          <>
            <ConversationList selectedId={threadId} />
            {threadId ? (
              <Transcript threadId={threadId} />
            ) : (
              <section class="transcript-pane placeholder" aria-label="Conversation">
                <p class="empty">Choose a conversation. Press ? for keyboard shortcuts.</p>
              </section>
            )}
          </>
        )}
      </main>
      {help && <Shortcuts onClose={() => setHelp(false)} />}
    </div>
  );
}
