import { createStore } from './store';

/** The console's client-side routes, all under /app (the service answers index.html for each). */
export const BASE = '/app';

export const route = createStore<string>(currentPath());

function currentPath(): string {
  const p = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) : '/';
  return p === '' ? '/' : p;
}

addEventListener('popstate', () => route.set(currentPath()));

export function navigate(path: string, options: { replace?: boolean } = {}): void {
  if (path === route.get()) return;
  if (options.replace) history.replaceState(null, '', BASE + path);
  else history.pushState(null, '', BASE + path);
  route.set(path);
}

/** The thread id of `/c/:id`, or null. */
export function threadIdOf(path: string): number | null {
  const m = /^\/c\/(\d+)$/.exec(path);
  return m ? Number(m[1]) : null;
}

/** A click on a link that stays in the console: navigated without a page load. */
export function onLinkClick(event: MouseEvent, path: string): void {
  if (event.metaKey || event.ctrlKey || event.shiftKey || event.button !== 0) return;
  event.preventDefault();
  navigate(path);
}
