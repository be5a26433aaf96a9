import { useEffect, useRef, useState } from 'preact/hooks';
import type { Message, Thread } from '../../client/client';
import { errorText } from '../shared/api';
import { channelName, fullTime, shortTime } from '../shared/format';
import { onRealtime, resync } from '../shared/realtime';
import { navigate } from '../shared/router';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { Attachments } from './Attachments';
import { Composer } from './Composer';
import { ContactPanel } from './ContactPanel';
import { contactName, contacts, wantContacts } from './contacts';
import { ThreadActions } from './ThreadActions';
import { visibleThreads } from './threads';

const PAGE = 30;

/** Oldest first for reading; the service pages newest first. */
const inOrder = (list: Iterable<Message>) => [...list].sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id);

function mergeMessages(current: readonly Message[], fresh: readonly Message[]): Message[] {
  const byId = new Map(current.map((m) => [m.id, m]));
  for (const m of fresh) byId.set(m.id, m);
  return inOrder(byId.values());
}

const STATE: Record<string, [mark: string, word: string]> = {
  queued: ['🕓', 'Queued'],
  sent: ['✓', 'Sent'],
  delivered: ['✓✓', 'Delivered'],
  read: ['✓✓', 'Read'],
  failed: ['!', 'Failed'],
};

function Delivery({ m }: { m: Message }) {
  const state = STATE[m.status];
  if (m.direction !== 'outbound' || m.kind !== 'message' || !state) return null;
  return (
    <span class={`delivery delivery-${m.status}`}>
      <span aria-hidden="true">{state[0]}</span> {state[1]}
      {m.status === 'failed' && m.error && <span class="failure">: {m.error}</span>}
    </span>
  );
}

/** One thread: its messages in order, older ones as the top scrolls into view, and the composer. */
export function Transcript({ threadId }: { threadId: number }) {
  const s = useStore(session)!;
  const names = useStore(contacts);
  const [thread, setThread] = useState<Thread | null>(null);
  const [messages, setMessages] = useState<Message[]>([]);
  const [older, setOlder] = useState<string | undefined>();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const scroller = useRef<HTMLElement>(null);
  const top = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);
  const messagesRef = useRef<Message[]>([]);
  messagesRef.current = messages;

  const markRead = () => {
    if (document.visibilityState === 'visible') void s.client.markThreadRead(threadId).catch(() => undefined);
  };

  async function loadNewest(first: boolean) {
    try {
      const [t, page] = await Promise.all([
        s.client.thread(threadId),
        s.client.page<Message>(`/v1/threads/${threadId}/messages`, { limit: PAGE }),
      ]);
      setThread(t);
      if (t.contactName === null) wantContacts([t.contactId]);
      setMessages((current) => (first ? inOrder(page.data) : mergeMessages(current, page.data)));
      if (first) setOlder(page.meta.nextCursor);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    }
  }

  useEffect(() => {
    setThread(null);
    setMessages([]);
    setOlder(undefined);
    stickToBottom.current = true;
    void loadNewest(true).then(markRead);
    const stopResync = resync.subscribe(() => void loadNewest(false));
    let timer: ReturnType<typeof setTimeout> | undefined;
    const stopEvents = onRealtime((event) => {
      if (event.type === 'message.created' && event.data.threadId === threadId) {
        // Coalesced: a burst of messages costs one read.
        timer ??= setTimeout(() => {
          timer = undefined;
          void loadNewest(false).then(() => event.data.direction === 'inbound' && markRead());
        }, 50);
      } else if (event.type === 'message.updated' && event.data.threadId === threadId) {
        const { id, status, error } = event.data;
        setMessages((list) => list.map((m) => (m.id === id ? { ...m, status: status as Message['status'], error } : m)));
        void refreshAttachments(id, event.data.attachments ?? []);
      } else if (event.type === 'thread.updated' && event.data.id === threadId) {
        setThread(event.data);
      }
    });
    return () => {
      stopResync();
      stopEvents();
      clearTimeout(timer);
    };
  }, [threadId, s.client]);

  /**
   * The event names only each file's id and status: a file that changed (stored, failed) is
   * read again for its size, name and error, so a placeholder turns into the image live.
   */
  async function refreshAttachments(messageId: number, announced: { id: number; status: string }[]) {
    const shown = messagesRef.current.find((m) => m.id === messageId)?.attachments ?? [];
    const changed = announced.filter((a) => shown.find((b) => b.id === a.id)?.status !== a.status);
    if (changed.length === 0) return;
    const fresh = await Promise.all(changed.map((a) => s.client.attachments.get(a.id).catch(() => null)));
    const byId = new Map(fresh.flatMap((a) => (a ? [[a.id, a] as const] : [])));
    setMessages((list) =>
      list.map((m) =>
        m.id !== messageId
          ? m
          : {
              ...m,
              attachments: [
                ...m.attachments.map((a) => byId.get(a.id) ?? a),
                ...[...byId.values()].filter((a) => !m.attachments.some((b) => b.id === a.id)),
              ],
            },
      ),
    );
  }

  // Keep the newest message in view unless the agent scrolled up to read.
  useEffect(() => {
    const el = scroller.current;
    if (el && stickToBottom.current) el.scrollTop = el.scrollHeight;
  }, [messages]);

  useEffect(() => {
    const el = top.current;
    if (!el || !older) return;
    const observer = new IntersectionObserver((entries) => {
      if (!entries.some((e) => e.isIntersecting) || !older) return;
      observer.disconnect();
      const box = scroller.current;
      const fromBottom = box ? box.scrollHeight - box.scrollTop : 0;
      s.client
        .page<Message>(`/v1/threads/${threadId}/messages`, { limit: PAGE, cursor: older })
        .then((page) => {
          stickToBottom.current = false;
          setMessages((current) => mergeMessages(current, page.data));
          setOlder(page.meta.nextCursor);
          requestAnimationFrame(() => {
            if (box) box.scrollTop = box.scrollHeight - fromBottom;
          });
        })
        .catch((err: unknown) => setError(errorText(err)));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [older, threadId]);

  async function setStatus(status: Thread['status']) {
    setBusy(true);
    try {
      setThread(await s.client.updateThread(threadId, { status }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  async function assignToMe() {
    setBusy(true);
    try {
      setThread(await s.client.updateThread(threadId, { assigneeId: s.user.id }));
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  const name = thread ? (thread.contactName ?? contactName(names.get(thread.contactId), thread.contactId)) : '';
  return (
    <section class="transcript-pane" aria-label="Conversation">
      <header class="transcript-head">
        <button type="button" class="back" onClick={() => navigate('/')}>
          ← Conversations
        </button>
        <div class="who">
          <h2>{name || 'Conversation'}</h2>
          {thread && (
            <p class="sub">
              {channelName(thread.integrationKey)} · {thread.status}
              {thread.assigneeId === s.user.id ? ' · assigned to you' : thread.assigneeId === null ? ' · unassigned' : ''}
            </p>
          )}
        </div>
        {thread && (
          <div class="actions">
            {thread.assigneeId !== s.user.id && (
              <button type="button" onClick={assignToMe} disabled={busy}>
                Assign to me
              </button>
            )}
            {thread.status === 'resolved' ? (
              <button type="button" onClick={() => setStatus('open')} disabled={busy}>
                Reopen
              </button>
            ) : (
              <button type="button" class="primary" onClick={() => setStatus('resolved')} disabled={busy} data-action="resolve">
                Resolve
              </button>
            )}
          </div>
        )}
      </header>
      {thread && <ThreadActions thread={thread} onChange={setThread} />}
      {thread && <ContactPanel thread={thread} />}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <section
        class="messages"
        ref={scroller}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region takes focus so the keyboard can scroll it, also when its messages hold no link (say, only images)
        tabIndex={0}
        aria-label="Transcript"
        onScroll={(e) => {
          const el = e.currentTarget;
          stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {older && (
          <div ref={top} class="more">
            Loading older messages…
          </div>
        )}
        <ol class="message-list" aria-label="Messages">
          {messages.map((m) => (
            <li key={m.id} class={`msg msg-${m.kind} ${m.kind === 'message' ? `msg-${m.direction}` : ''}`} data-message-id={m.id}>
              {m.kind === 'activity' ? (
                <p class="activity">
                  {m.text} · <time dateTime={m.createdAt}>{shortTime(m.createdAt)}</time>
                </p>
              ) : (
                <div class="bubble">
                  {m.kind === 'note' && <p class="note-tag">Private note</p>}
                  {m.text && <p class="text">{m.text}</p>}
                  <Attachments message={m} />
                  <p class="meta">
                    <time dateTime={m.createdAt} title={fullTime(m.createdAt)}>
                      {shortTime(m.createdAt)}
                    </time>{' '}
                    <Delivery m={m} />
                  </p>
                </div>
              )}
            </li>
          ))}
        </ol>
      </section>
      {thread && <Composer thread={thread} />}
    </section>
  );
}

/** The thread after/before the selected one in the list, for j and k. */
export function neighbour(selected: number | null, step: 1 | -1): number | null {
  const list = visibleThreads.get();
  if (list.length === 0) return null;
  const at = list.findIndex((t) => t.id === selected);
  const next = at === -1 ? (step === 1 ? 0 : list.length - 1) : at + step;
  return list[Math.max(0, Math.min(list.length - 1, next))]?.id ?? null;
}
