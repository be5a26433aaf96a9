import type { ComponentType } from 'preact';
import { onLinkClick } from '../shared/router';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { AiAssist } from './AiAssist';
import { AuditLog } from './AuditLog';
import { Automation } from './Automation';
import { CannedResponses } from './CannedResponses';
import { Connections } from './Connections';
import { DeadLetters } from './DeadLetters';
import { Macros } from './Macros';
import { SingleSignOn } from './SingleSignOn';
import { Sla } from './Sla';
import { Teams } from './Teams';
import { Users } from './Users';
import { Webhooks } from './Webhooks';
import './settings.css';

/** The admin settings' pages (docs/console.md, "Settings"). */
export const SETTINGS_PAGES: [slug: string, title: string, page: ComponentType][] = [
  ['connections', 'Connections', Connections],
  ['webhooks', 'Webhooks', Webhooks],
  ['dead-letters', 'Dead letters', DeadLetters],
  ['users', 'Users', Users],
  ['teams', 'Teams', Teams],
  ['canned-responses', 'Canned responses', CannedResponses],
  ['automation', 'Automation', Automation],
  ['macros', 'Macros', Macros],
  ['audit-log', 'Audit log', AuditLog],
  ['sla', 'SLAs and hours', Sla],
  ['sso', 'Single sign-on', SingleSignOn],
  ['ai', 'AI assist', AiAssist],
];

export function Settings({ page }: { page: string }) {
  const s = useStore(session)!;
  const current = SETTINGS_PAGES.find(([slug]) => slug === page) ?? SETTINGS_PAGES[0]!;
  const Page = current[2];
  // The service refuses an agent's calls anyway (403); the console does not offer them.
  if (!s.user.roles.includes('admin')) {
    return (
      <section class="settings-page" aria-labelledby="settings-title">
        <h2 id="settings-title">Settings</h2>
        <p class="empty">Settings are for workspace admins.</p>
      </section>
    );
  }
  return (
    <div class="settings">
      <nav class="settings-nav" aria-label="Settings">
        <ul>
          {SETTINGS_PAGES.map(([slug, title]) => (
            <li key={slug}>
              <a
                href={`/app/settings/${slug}`}
                aria-current={slug === current[0] ? 'page' : undefined}
                onClick={(e) => onLinkClick(e, `/settings/${slug}`)}
              >
                {title}
              </a>
            </li>
          ))}
        </ul>
      </nav>
      <section class="settings-page" aria-labelledby="settings-title">
        <h2 id="settings-title">{current[1]}</h2>
        <Page key={current[0]} />
      </section>
    </div>
  );
}
