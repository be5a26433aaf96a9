import { useRef, useState } from 'preact/hooks';
import type { Notification as InboxNotification } from '../../../packages/client/src/index';
import { contacts } from '../inbox/contacts';
import { fullTime, shortTime } from '../shared/format';
import { navigate } from '../shared/router';
import { useStore } from '../shared/store';
import { team } from '../shared/team';
import { useDismiss } from '../shared/use-dismiss';
import { askPermission, permission, setSound, soundOn } from './alerts';
import { threadLabel, what } from './describe';
import { bell, markAllRead, markRead, unreadLabel } from './notifications';
import { namedThreads } from './thread-names';

/**
 * The bell in the header (docs/console.md, "The bell"): the unread count, and a panel with the
 * newest notifications, each opening its conversation and marking itself read; "Mark all
 * read"; the button that allows desktop notifications and the sound switch.
 */
export function BellMenu() {
  const b = useStore(bell);
  // Names change as the team, the threads and their contacts load: each re-renders the list.
  useStore(team);
  useStore(namedThreads);
  useStore(contacts);
  const allowed = useStore(permission);
  const sound = useStore(soundOn);
  const [open, setOpen] = useState(false);
  const wrap = useRef<HTMLDivElement>(null);
  const button = useRef<HTMLButtonElement>(null);
  const count = b.unreadIds.size;

  // Escape closes it wherever the focus is, as a click outside does.
  useDismiss(open, () => setOpen(false), wrap, button);

  function openThread(e: MouseEvent, n: InboxNotification) {
    if (e.metaKey || e.ctrlKey || e.shiftKey || e.button !== 0) return;
    e.preventDefault();
    void markRead(n);
    setOpen(false);
    if (n.threadId !== null) navigate(`/c/${n.threadId}`);
  }

  return (
    <div class="bell-wrap" ref={wrap}>
      <button
        type="button"
        ref={button}
        class="bell"
        aria-expanded={open}
        aria-controls="notifications"
        aria-label={count > 0 ? `Notifications, ${unreadLabel(b)} unread` : 'Notifications'}
        onClick={() => setOpen(!open)}
      >
        <svg aria-hidden="true" viewBox="0 0 24 24" width="18" height="18">
          <path
            fill="currentColor"
            d="M12 22a2.5 2.5 0 0 0 2.45-2h-4.9A2.5 2.5 0 0 0 12 22Zm7-6V11a7 7 0 0 0-5.5-6.84V3.5a1.5 1.5 0 0 0-3 0v.66A7 7 0 0 0 5 11v5l-2 2v1h18v-1l-2-2Z"
          />
        </svg>
        {count > 0 && (
          <span class="bell-count" aria-hidden="true">
            {unreadLabel(b)}
          </span>
        )}
      </button>
      {open && (
        <section id="notifications" class="notification-panel" aria-label="Notifications">
          <div class="panel-head">
            <h2>Notifications</h2>
            <button type="button" class="link" onClick={() => void markAllRead()} disabled={count === 0}>
              Mark all read
            </button>
          </div>
          {b.recent.length === 0 ? (
            <p class="empty">Nothing needs you yet.</p>
          ) : (
            <ul class="notification-list" aria-label="Notification list">
              {b.recent.map((n) => {
                const unread = b.unreadIds.has(n.id);
                const body = (
                  <>
                    <span class="notification-what">
                      {unread && <span class="dot" aria-hidden="true" />}
                      {what(n)}
                      {unread && <span class="sr-only"> (unread)</span>}
                    </span>
                    <span class="notification-where">{threadLabel(n)}</span>
                    <time dateTime={n.createdAt} title={fullTime(n.createdAt)}>
                      {shortTime(n.createdAt)}
                    </time>
                  </>
                );
                return (
                  <li key={n.id} class={unread ? 'notification unread' : 'notification'}>
                    {n.threadId !== null ? (
                      <a href={`/app/c/${n.threadId}`} onClick={(e) => openThread(e, n)} data-notification-id={n.id}>
                        {body}
                      </a>
                    ) : (
                      <span class="notification-static">{body}</span>
                    )}
                  </li>
                );
              })}
            </ul>
          )}
          <div class="panel-foot">
            {allowed === 'default' && (
              <button type="button" onClick={() => void askPermission()}>
                Allow desktop notifications
              </button>
            )}
            {allowed === 'granted' && <p class="muted">Desktop notifications are on.</p>}
            {allowed === 'denied' && <p class="muted">Desktop notifications are blocked in this browser's site settings.</p>}
            <label class="check">
              <input type="checkbox" checked={sound} onChange={(e) => setSound(e.currentTarget.checked)} />
              Play a sound
            </label>
          </div>
        </section>
      )}
    </div>
  );
}
