import { onLinkClick } from '../router';

/** The admin settings' pages; each is filled in on its own (docs/console.md). */
export const SETTINGS_PAGES: [slug: string, title: string][] = [
  ['connections', 'Connections'],
  ['webhooks', 'Webhooks'],
  ['dead-letters', 'Dead letters'],
  ['users', 'Users'],
  ['canned-responses', 'Canned responses'],
];

export function Settings({ page }: { page: string }) {
  const current = SETTINGS_PAGES.find(([slug]) => slug === page) ?? SETTINGS_PAGES[0]!;
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
        <p class="empty">This page is not built yet.</p>
      </section>
    </div>
  );
}
