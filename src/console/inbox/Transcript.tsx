import { useEffect, useRef, useState } from 'preact/hooks';
import type { Message } from '../../../packages/client/src/index';
import { channelName, fullTime, shortTime } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { team, userName, wantTeam } from '../shared/team';
import { useOnVisible } from '../shared/use-on-visible';
import { Attachments } from './Attachments';
import { aiEnabled, aiErrorText, wantAi } from './ai';
import { Composer } from './Composer';
import { ContactPanel } from './ContactPanel';
import { backToList, CONVERSATION_TITLE, openThread } from './ConversationList';
import { contactName, contacts } from './contacts';
import { EmailMessage } from './EmailMessage';
import { MacroMenu } from './MacroMenu';
import { splitMentions } from './mentions';
import { ThreadActions } from './ThreadActions';
import { visibleThreads } from './threads';
import { type News, useThread } from './use-thread';
import { joinNames, useViewing, viewers } from './viewing';

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

/** An ISO instant the service writes into an activity line ("snoozed … until 2026-…Z"). */
const INSTANT = /(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?Z)/;

/**
 * An activity line as the agent reads it: the stored text keeps the machine-readable instant,
 * shown here in the agent's own locale and time zone.
 */
function ActivityText({ text }: { text: string }) {
  return (
    <>
      {text.split(INSTANT).map((part, i) =>
        i % 2 === 1 ? (
          <time key={part} dateTime={part}>
            {fullTime(part)}
          </time>
        ) : (
          part
        ),
      )}
    </>
  );
}

/** A note's text with the people it mentions set apart ("@Cy"). */
function NoteText({ m }: { m: Message }) {
  const users = useStore(team);
  const named = (users ?? []).filter((u) => m.mentions?.includes(u.id));
  return (
    <>
      {splitMentions(m.text, named).map((part, i) =>
        part.mention ? (
          <mark class="mention" key={i}>
            {part.text}
          </mark>
        ) : (
          part.text
        ),
      )}
    </>
  );
}

/** Who wrote an outbound message or note: a user by name, "Automation" for the service's own, "API" for an API key. */
function Author({ m }: { m: Message }) {
  const users = useStore(team);
  if (m.direction !== 'outbound' && m.kind !== 'note') return null;
  const name =
    m.authorId !== null ? (users?.find((u) => u.id === m.authorId)?.name ?? `User ${m.authorId}`) : m.automation ? 'Automation' : 'API';
  return <span class="author">{name} · </span>;
}

/** Who else has the thread open: "Cy is viewing", "Bo is typing…" (a live region, so a screen reader hears it). */
function Collision({ threadId }: { threadId: number }) {
  const here = useStore(viewers).get(threadId) ?? [];
  const users = useStore(team);
  const names = (typing: boolean) => here.filter((v) => v.typing === typing).map((v) => userName(users, v.userId));
  const verb = (list: string[], one: string, many: string) =>
    list.length === 0 ? null : `${joinNames(list)} ${list.length === 1 ? one : many}`;
  const parts = [verb(names(true), 'is typing…', 'are typing…'), verb(names(false), 'is viewing', 'are viewing')].filter(Boolean);
  return (
    <p class="collision" role="status">
      {parts.join(' · ')}
    </p>
  );
}

/**
 * What came live in the open conversation, in words, for a screen reader (a `log` region, out
 * of sight): the contact's messages, colleagues' replies and notes, and a reply that failed.
 * The agent's own messages are not repeated to them, nor activity, which the toolbar's state
 * line says already. A note's words and a failure's reason are left to the transcript, so
 * each stays written once on the page.
 */
function LiveNews({ news, contact }: { news: News[]; contact: string }) {
  const users = useStore(team);
  const words = ({ message: m, failed }: News) => {
    const who = m.authorId !== null ? userName(users, m.authorId) : m.automation ? 'Automation' : 'API';
    const files = m.attachments.length === 0 ? '' : ` (${m.attachments.length === 1 ? '1 file' : `${m.attachments.length} files`})`;
    if (failed) return 'A reply was not delivered; the reason is shown with it.';
    if (m.kind === 'note') return `New note from ${who}.`;
    if (m.direction === 'inbound') return `New message from ${contact || 'the contact'}: ${m.text}${files}`;
    return `${who} replied: ${m.text}${files}`;
  };
  return (
    <div class="sr-only" role="log" aria-label="New in this conversation">
      {news
        .filter((n) => n.failed || n.message.kind !== 'activity')
        .map((n) => (
          <p key={n.key}>{words(n)}</p>
        ))}
    </div>
  );
}

/** Focuses the header's Resolve or Reopen button once it is drawn (a disabled button lost the focus). */
const focusAction = (action: 'resolve' | 'reopen') =>
  requestAnimationFrame(() => document.querySelector<HTMLElement>(`[data-action="${action}"]`)?.focus());

/** The thread to show once this one is resolved: the next in the list, else the one before. */
function after(threadId: number): number | null {
  const next = neighbour(threadId, 1);
  if (next !== null && next !== threadId) return next;
  const previous = neighbour(threadId, -1);
  return previous !== threadId ? previous : null;
}

/** One thread (from `useThread`): its messages in order, older ones as the top scrolls into view, and the composer. */
export function Transcript({ threadId }: { threadId: number }) {
  const s = useStore(session)!;
  const names = useStore(contacts);
  const { thread, showAnswer, messages, older, error, setError, busy, loadOlder, update, added, news } = useThread(threadId);
  const ai = useStore(aiEnabled) === true;
  const [summarizing, setSummarizing] = useState(false);
  const scroller = useRef<HTMLElement>(null);
  const top = useRef<HTMLDivElement>(null);
  const stickToBottom = useRef(true);

  const list = useRef<HTMLOListElement>(null);

  useEffect(wantTeam, []);
  useEffect(wantAi, []);
  useViewing(threadId);
  useEffect(() => {
    stickToBottom.current = true;
  }, [threadId]);

  // Keep the newest message in view unless the agent scrolled up to read: when messages
  // arrive, and when the list grows or the box shrinks without a scroll event (an image that
  // loads, a file placeholder that turns into a preview, the header filling in).
  // A scroll event also comes from the browser itself: the pinning's own, a frame later, and
  // scroll anchoring's shift when an image above grows the list. Neither is the agent
  // scrolling away, so only a scroll over the height last laid out here says where they read.
  const pinnedAt = useRef(-1);
  const laidOut = useRef(0);
  const pin = () => {
    const el = scroller.current;
    if (!el) return;
    laidOut.current = el.scrollHeight;
    if (!stickToBottom.current) return;
    el.scrollTop = el.scrollHeight;
    pinnedAt.current = el.scrollTop;
  };
  useEffect(pin, [messages]);
  useEffect(() => {
    const box = scroller.current;
    const content = list.current;
    if (!box || !content) return;
    // Also the box itself: the header above it grows once the team and contact load.
    const resized = new ResizeObserver(pin);
    resized.observe(content);
    resized.observe(box);
    return () => resized.disconnect();
  }, [threadId]);

  /** The model's summary, stored by the service as the agent's private note (`ai: true`). */
  async function summarize() {
    setSummarizing(true);
    try {
      added(await s.client.summarizeThread(threadId));
      stickToBottom.current = true;
      setError(null);
    } catch (err) {
      setError(aiErrorText(err));
    } finally {
      setSummarizing(false);
    }
  }

  /**
   * Resolves, then opens the next conversation with the focus on its row (as `j` leaves it);
   * with none left, the focus stays on the header's button, now "Reopen".
   */
  async function resolve() {
    const next = after(threadId);
    if (!(await update({ status: 'resolved' }))) return;
    if (next !== null) openThread(next);
    else focusAction('reopen');
  }

  /** The button goes once the thread is the agent's: the focus moves to the assignee it set. */
  async function assignToMe() {
    if (await update({ assigneeId: s.user.id })) requestAnimationFrame(() => document.getElementById('thread-assignee')?.focus());
  }

  async function reopen() {
    if (await update({ status: 'open' })) focusAction('resolve');
  }

  // Older messages as the top scrolls into view, the agent's place kept where it was.
  useOnVisible(top, () => {
    const box = scroller.current;
    const fromBottom = box ? box.scrollHeight - box.scrollTop : 0;
    void loadOlder().then((added) => {
      if (!added) return;
      stickToBottom.current = false;
      requestAnimationFrame(() => {
        if (box) box.scrollTop = box.scrollHeight - fromBottom;
      });
    });
  }, [older, threadId]);

  const name = thread ? (thread.contactName ?? contactName(names.get(thread.contactId), thread.contactId)) : '';
  return (
    <section class="transcript-pane" aria-label="Conversation">
      <header class="transcript-head">
        <button type="button" class="back" onClick={() => backToList(threadId)}>
          ← Conversations
        </button>
        <div class="who">
          {/* Takes the focus when a conversation opens where the list hides (a phone). */}
          <h2 id={CONVERSATION_TITLE} tabIndex={-1}>
            {name || 'Conversation'}
          </h2>
          {thread && (
            <p class="sub">
              {channelName(thread.integrationKey)} · {thread.status}
              {thread.assigneeId === s.user.id ? ' · assigned to you' : thread.assigneeId === null ? ' · unassigned' : ''}
            </p>
          )}
        </div>
        {thread && (
          <div class="actions">
            <MacroMenu thread={thread} onChange={showAnswer} />
            {ai && (
              <button type="button" onClick={() => void summarize()} disabled={summarizing} aria-busy={summarizing}>
                {summarizing ? 'Summarizing…' : 'Summarize'}
              </button>
            )}
            {thread.assigneeId !== s.user.id && (
              <button type="button" onClick={() => void assignToMe()} disabled={busy}>
                Assign to me
              </button>
            )}
            {/* A snoozed or pending conversation may be opened again now, without resolving it first. */}
            {thread.status !== 'open' && (
              <button type="button" onClick={() => void reopen()} disabled={busy} data-action="reopen">
                Reopen
              </button>
            )}
            {thread.status !== 'resolved' && (
              <button type="button" class="primary" onClick={() => void resolve()} disabled={busy} data-action="resolve">
                Resolve
              </button>
            )}
          </div>
        )}
      </header>
      <Collision threadId={threadId} />
      <LiveNews news={news} contact={name} />
      {thread && <ThreadActions thread={thread} onChange={showAnswer} />}
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
          if (el.scrollTop === pinnedAt.current || el.scrollHeight !== laidOut.current) return;
          stickToBottom.current = el.scrollHeight - el.scrollTop - el.clientHeight < 40;
        }}
      >
        {older && (
          <div ref={top} class="more">
            Loading older messages…
          </div>
        )}
        <ol class="message-list" aria-label="Messages" ref={list}>
          {messages.map((m) => (
            <li key={m.id} class={`msg msg-${m.kind} ${m.kind === 'message' ? `msg-${m.direction}` : ''}`} data-message-id={m.id}>
              {m.kind === 'activity' ? (
                <p class="activity">
                  <ActivityText text={m.text} /> · <time dateTime={m.createdAt}>{shortTime(m.createdAt)}</time>
                </p>
              ) : (
                <div class="bubble">
                  {m.kind === 'note' && (
                    <p class="note-tag">
                      Private note
                      {m.ai && (
                        <>
                          {' '}
                          <span class="ai-badge" title="Written by the workspace's AI model">
                            AI
                          </span>
                          <span class="sr-only">summary by the model</span>
                        </>
                      )}
                    </p>
                  )}
                  {m.email ? (
                    <EmailMessage m={{ ...m, email: m.email }} />
                  ) : (
                    m.text && <p class="text">{m.kind === 'note' ? <NoteText m={m} /> : m.text}</p>
                  )}
                  <Attachments message={m} />
                  <p class="meta">
                    <Author m={m} />
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
