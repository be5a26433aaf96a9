import { useEffect, useRef, useState } from 'preact/hooks';
import type { AiRewriteInstruction, CannedResponse, Thread } from '../../../packages/client/src/index';
import { fullTime } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { team, wantTeam } from '../shared/team';
import { AttachButton, FileChips } from './AttachFiles';
import { aiEnabled, aiErrorText, REWRITES, streamSuggestion, wantAi } from './ai';
import { type Draft, draftOf, saveDraft } from './drafts';
import { EmailFields, mailFields } from './EmailFields';
import { isEmailThread } from './EmailMessage';
import { attachFiles, chosenFiles, clearFiles, filesOf, filesPerMessage } from './files';
import { choicesFor, insertMention, mentionAt, mentionedIn } from './mentions';
import { TemplatePicker } from './TemplatePicker';
import { fillCanned, useCannedResponses, useReply } from './use-composer';
import { stoppedTyping, typed } from './viewing';

/**
 * The reply box: Enter sends, Shift+Enter breaks a line; `/` at the start lists canned
 * responses; "Private note" writes for colleagues only. Outside the channel's reply window it
 * says so and offers the connection's templates. Files attach with the button or a pasted image
 * (see files.ts) and go with the reply by their ids; text is optional when there are files.
 * In a note, `@` lists the people to mention (mentions.ts). With the workspace's AI assist on
 * (docs/ai.md), "Suggest" (Ctrl+J) puts a draft in the box and "Rewrite" replaces the text (or
 * the selected part) with the model's version; neither sends anything, and "Restore" or
 * Ctrl+Z right after gives back what the box held.
 */
export function Composer({ thread }: { thread: Thread }) {
  const [draft, setDraft] = useState(() => draftOf(thread.id));
  const { sending, error, windowClosed, closedByClock, reopened, send: sendReply } = useReply(thread);
  const [pick, setPick] = useState(0);
  const [caret, setCaret] = useState(0);
  /** Where the `@` of a mention list the agent closed with Escape is: it stays closed. */
  const [dismissedAt, setDismissedAt] = useState(-1);
  const box = useRef<HTMLTextAreaElement>(null);
  const s = useStore(session)!;
  const me = s.user.id;
  const users = useStore(team);
  const files = filesOf(useStore(chosenFiles), thread.id);
  const limit = filesPerMessage(thread.integrationKey, draft.note);
  const stored = files.flatMap((f) => (f.state === 'stored' && f.attachment ? [f.attachment.id] : []));
  // Every file must be uploaded (or removed) first, so a reply never goes without one it shows.
  const filesReady = files.every((f) => f.state === 'stored');
  const mail = isEmailThread(thread.integrationKey);
  const ai = useStore(aiEnabled) === true;
  const [aiBusy, setAiBusy] = useState<'suggest' | 'rewrite' | null>(null);
  const [aiError, setAiError] = useState<string | null>(null);
  /** The replies of similar resolved conversations the last suggestion drew on. */
  const [sources, setSources] = useState<number[] | null>(null);
  /** What the box held before the model's text replaced it, and that text. */
  const [restore, setRestore] = useState<{ before: string; after: string } | null>(null);
  const [rewriteOpen, setRewriteOpen] = useState(false);
  /** The part of the text a rewrite replaces: the selection when the menu opened, else all. */
  const [span, setSpan] = useState<[number, number] | null>(null);
  const [language, setLanguage] = useState('');
  // An answer comes back after awaits: it must change the draft as it is then, in the thread it was asked for.
  const latest = useRef({ draft, threadId: thread.id });
  latest.current = { draft, threadId: thread.id };

  useEffect(wantAi, []);
  useEffect(() => {
    setDraft(draftOf(thread.id));
    setAiError(null);
    setSources(null);
    setRestore(null);
    setRewriteOpen(false);
  }, [thread.id]);

  const update = (next: typeof draft) => {
    setDraft(next);
    saveDraft(thread.id, next);
  };
  // Other files make another message: it gets a key of its own.
  const filesChanged = () => update({ ...draft, idempotencyKey: undefined });

  const closed = !draft.note && (closedByClock || windowClosed !== null);

  // Canned responses: `/shortcode…` at the start of the box.
  const slash = /^\/([a-z0-9_-]*)$/.exec(draft.text);
  const responses = useCannedResponses(Boolean(slash));
  const matching = slash ? responses.filter((r) => r.shortCode.startsWith(slash[1]!)) : [];
  const menuOpen = matching.length > 0;

  // Mentions: `@name…` at the caret, in a note.
  useEffect(() => {
    if (draft.note) wantTeam();
  }, [draft.note]);
  const mention = draft.note && !menuOpen ? mentionAt(draft.text, caret) : null;
  const people = mention && mention.at !== dismissedAt && users ? choicesFor(users, mention.query, me) : [];
  const peopleOpen = people.length > 0;
  const picked = Math.min(pick, people.length - 1);

  function mentionPerson(index: number) {
    if (!mention) return;
    const user = people[index];
    if (!user) return;
    const next = insertMention(draft.text, mention, caret, user);
    update({ ...draft, text: next.text, idempotencyKey: undefined });
    setCaret(next.caret);
    setPick(0);
    requestAnimationFrame(() => {
      const el = box.current;
      if (!el) return;
      el.focus();
      // Only if nothing was typed since: a fast typist's next words are already in the box,
      // and moving the caret back would put the rest of them before those.
      if (el.value === next.text) el.setSelectionRange(next.caret, next.caret);
    });
  }

  async function insert(r: CannedResponse) {
    setPick(0);
    // Variables such as {{contact.name}} are filled in as the service fills a rule's reply;
    // when the contact cannot be read, the text goes in as written, for the agent to edit.
    const text = await fillCanned(s, thread, r.content).catch(() => r.content);
    update({ ...draft, text });
    box.current?.focus();
  }

  /** Puts the model's text in the box, keeping the previous text for "Restore"; nothing is sent. */
  function replaceText(text: string, before = latest.current.draft.text) {
    update({ ...latest.current.draft, text, idempotencyKey: undefined });
    setRestore({ before, after: text });
    requestAnimationFrame(() => box.current?.focus());
  }

  function undoAi() {
    if (!restore) return;
    update({ ...latest.current.draft, text: restore.before, idempotencyKey: undefined });
    setRestore(null);
    setSources(null);
    box.current?.focus();
  }

  /** One call to the model: busy meanwhile, its refusal shown inline, the focus kept in the box. */
  async function askModel(kind: 'suggest' | 'rewrite', run: () => Promise<void>) {
    if (aiBusy) return;
    const threadId = thread.id;
    setAiBusy(kind);
    setAiError(null);
    try {
      await run();
    } catch (err) {
      if (latest.current.threadId === threadId) setAiError(`${aiErrorText(err)} Your text is unchanged.`);
    } finally {
      setAiBusy(null);
      box.current?.focus();
    }
  }

  const suggest = () =>
    askModel('suggest', async () => {
      const threadId = thread.id;
      const before = latest.current.draft.text;
      // Drawn as it streams; the box is read-only meanwhile, so nothing the agent types is lost.
      const answer = await streamSuggestion(threadId, (soFar) => {
        if (latest.current.threadId === threadId) update({ ...latest.current.draft, text: soFar, idempotencyKey: undefined });
      });
      if (latest.current.threadId !== threadId) return;
      replaceText(answer.text, before);
      setSources(answer.sources);
    });

  const rewrite = (instruction: AiRewriteInstruction) =>
    askModel('rewrite', async () => {
      const threadId = thread.id;
      const whole = latest.current.draft.text;
      const [from, to] = span && span[0] < span[1] && span[1] <= whole.length ? span : [0, whole.length];
      const answer = await s.client.rewrite({ text: whole.slice(from, to), instruction });
      if (latest.current.threadId !== threadId) return;
      setRewriteOpen(false);
      setSources(null);
      replaceText(whole.slice(0, from) + answer.text + whole.slice(to));
    });

  function openRewrite() {
    const el = box.current;
    setSpan(el && el.selectionStart < el.selectionEnd ? [el.selectionStart, el.selectionEnd] : null);
    setRewriteOpen(!rewriteOpen);
  }

  async function send() {
    const text = draft.text.trim();
    if ((!text && stored.length === 0) || !filesReady || sending) return;
    const key = draft.idempotencyKey ?? crypto.randomUUID();
    const mentions =
      draft.note && users
        ? mentionedIn(
            text,
            users.filter((u) => u.id !== me),
          )
        : [];
    const pending = { ...draft, idempotencyKey: key };
    const threadId = thread.id;
    update(pending);
    const outcome = await sendReply(
      {
        ...(text ? { text } : {}),
        ...(stored.length > 0 ? { attachmentIds: stored } : {}),
        ...(draft.note ? { private: true } : {}),
        ...(mentions.length > 0 ? { mentions } : {}),
        ...(mail && !draft.note ? mailFields(draft) : {}),
      },
      key,
    );
    if (outcome === 'sent') {
      // What was sent leaves the box; what the agent typed or switched on while it went (the
      // next words, the note toggle) stays, for the next message.
      settle(threadId, (now) => {
        const next: Draft = {
          text: now.text.startsWith(pending.text) ? now.text.slice(pending.text.length).trimStart() : now.text,
          note: now.note,
        };
        // A mail's Cc and Bcc went with it; ones changed meanwhile are the next mail's.
        if (now.cc !== pending.cc) next.cc = now.cc;
        if (now.bcc !== pending.bcc) next.bcc = now.bcc;
        return next;
      });
      if (latest.current.threadId === threadId) {
        setRestore(null);
        setSources(null);
        if (!latest.current.draft.text) stoppedTyping(threadId);
      }
      clearFiles(threadId);
    } else if (outcome === 'refused') {
      // Nothing was sent: the text stays as it is now, and its next try is a new message.
      settle(threadId, (now) => ({ ...now, idempotencyKey: undefined }));
    }
  }

  /**
   * Changes the draft of `threadId` as it is now, after a send's await: the one on screen if
   * the agent is still in that conversation, else the one kept for it (never the box of the
   * conversation they moved to).
   */
  function settle(threadId: number, change: (now: Draft) => Draft) {
    if (latest.current.threadId === threadId) {
      const next = change(latest.current.draft);
      latest.current = { ...latest.current, draft: next };
      setDraft(next);
      saveDraft(threadId, next);
    } else saveDraft(threadId, change(draftOf(threadId)));
  }

  function onKeyDown(e: KeyboardEvent) {
    if (peopleOpen) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        setPick((p) => (Math.min(p, people.length - 1) + (e.key === 'ArrowDown' ? 1 : people.length - 1)) % people.length);
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        mentionPerson(picked);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        setDismissedAt(mention!.at);
        return;
      }
    }
    if (menuOpen) {
      if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
        e.preventDefault();
        setPick((p) => (p + (e.key === 'ArrowDown' ? 1 : matching.length - 1)) % matching.length);
        return;
      }
      if (e.key === 'Enter' || e.key === 'Tab') {
        e.preventDefault();
        void insert(matching[Math.min(pick, matching.length - 1)]!);
        return;
      }
      if (e.key === 'Escape') {
        e.preventDefault();
        update({ ...draft, text: '' });
        return;
      }
    }
    if (ai && (e.ctrlKey || e.metaKey) && !e.altKey && !e.shiftKey && e.key.toLowerCase() === 'j') {
      // Also keeps the browser's own Ctrl+J (its downloads) from opening.
      e.preventDefault();
      if (!closed || draft.note) void suggest();
      return;
    }
    if (restore && draft.text === restore.after && (e.ctrlKey || e.metaKey) && !e.shiftKey && e.key.toLowerCase() === 'z') {
      // The box's own undo history does not hold a text set by the page: this one step is ours.
      e.preventDefault();
      undoAi();
      return;
    }
    if (e.key === 'Enter' && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      void send();
    } else if (e.key === 'Escape') {
      box.current?.blur();
    }
  }

  return (
    <div class={draft.note ? 'composer note-mode' : 'composer'}>
      {closed && (
        <div class="window-closed" role="status">
          <p>
            {windowClosed ??
              `The reply window closed at ${fullTime(thread.replyWindowEndsAt!)}: the channel accepts only a template until the contact writes again.`}
          </p>
          <TemplatePicker thread={thread} onSent={reopened} />
        </div>
      )}
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {aiError && (
        <p class="error" role="alert">
          {aiError}
        </p>
      )}
      {menuOpen && (
        <div class="canned" role="listbox" aria-label="Canned responses" id="canned-list">
          {matching.map((r, i) => (
            <div
              key={r.id}
              tabIndex={-1}
              id={`canned-${r.id}`}
              role="option"
              aria-selected={i === pick}
              class={i === pick ? 'picked' : ''}
              onMouseDown={(e) => {
                e.preventDefault();
                void insert(r);
              }}
            >
              <strong>/{r.shortCode}</strong> {r.content}
            </div>
          ))}
        </div>
      )}
      {peopleOpen && (
        <div class="canned mentions" role="listbox" aria-label="People to mention" id="mention-list">
          {people.map((u, i) => (
            <div
              key={u.id}
              tabIndex={-1}
              id={`mention-${u.id}`}
              role="option"
              aria-selected={i === picked}
              class={i === picked ? 'picked' : ''}
              onMouseDown={(e) => {
                e.preventDefault();
                mentionPerson(i);
              }}
            >
              <strong>@{u.name}</strong> <span class="muted">{u.email}</span>
            </div>
          ))}
        </div>
      )}
      <label for="reply-box" class="sr-only">
        Reply
      </label>
      <textarea
        id="reply-box"
        ref={box}
        rows={3}
        placeholder={
          draft.note
            ? 'Write a private note (only your team sees it); @ mentions a colleague'
            : 'Write a reply. Enter sends, Shift+Enter breaks a line, / for canned responses'
        }
        value={draft.text}
        disabled={closed && !draft.note}
        readOnly={aiBusy !== null}
        aria-busy={aiBusy !== null}
        aria-controls={menuOpen ? 'canned-list' : peopleOpen ? 'mention-list' : undefined}
        aria-activedescendant={
          menuOpen
            ? `canned-${matching[Math.min(pick, matching.length - 1)]!.id}`
            : peopleOpen
              ? `mention-${people[picked]!.id}`
              : undefined
        }
        onInput={(e) => {
          update({ ...draft, text: e.currentTarget.value, idempotencyKey: undefined });
          setCaret(e.currentTarget.selectionStart);
          typed(thread.id);
        }}
        onKeyUp={(e) => setCaret(e.currentTarget.selectionStart)}
        onClick={(e) => setCaret(e.currentTarget.selectionStart)}
        onKeyDown={onKeyDown}
        onPaste={(e) => {
          // An image on the clipboard (a screenshot) attaches like a chosen file.
          const images = [...(e.clipboardData?.files ?? [])].filter((f) => f.type.startsWith('image/'));
          if (images.length === 0 || limit === 0) return;
          e.preventDefault();
          attachFiles(thread.id, images.slice(0, Math.max(0, limit - files.length)));
          filesChanged();
        }}
      />
      {mail && !draft.note && (
        <EmailFields draft={draft} onChange={(fields) => update({ ...draft, ...fields, idempotencyKey: undefined })} />
      )}
      <FileChips threadId={thread.id} files={files} onChange={filesChanged} />
      <p class="ai-status muted" role="status">
        {aiBusy === 'suggest'
          ? 'Asking the model for a draft…'
          : aiBusy === 'rewrite'
            ? 'The model is rewriting your text…'
            : restore && draft.text === restore.after
              ? sources && sources.length > 0
                ? `Draft by the model, drawing on ${sources.length === 1 ? 'a reply' : `${sources.length} replies`} of similar resolved conversations. Nothing is sent until you send it.`
                : 'Text by the model. Nothing is sent until you send it.'
              : ''}
      </p>
      {ai && rewriteOpen && (
        <fieldset id="rewrite-menu" class="rewrite-menu">
          <legend class="sr-only">Rewrite {span ? 'the selected text' : 'the text'}</legend>
          {REWRITES.map(([instruction, label]) => (
            <button key={instruction} type="button" disabled={aiBusy !== null} onClick={() => void rewrite(instruction)}>
              {label}
            </button>
          ))}
          <form
            class="inline"
            onSubmit={(e) => {
              e.preventDefault();
              const to = language.trim();
              if (to.length >= 2) void rewrite(`translate:${to}`);
            }}
          >
            <label>
              Translate to{' '}
              <input value={language} maxLength={40} placeholder="German" onInput={(e) => setLanguage(e.currentTarget.value)} />
            </label>
            <button type="submit" disabled={aiBusy !== null || language.trim().length < 2}>
              Translate
            </button>
          </form>
        </fieldset>
      )}
      <div class="composer-bar">
        <label class="check">
          <input type="checkbox" checked={draft.note} onChange={(e) => update({ ...draft, note: e.currentTarget.checked })} />
          Private note
        </label>
        {!closed && <AttachButton threadId={thread.id} room={limit - files.length} limit={limit} onChange={filesChanged} />}
        {ai && !(closed && !draft.note) && (
          <span class="ai-tools">
            <button type="button" onClick={() => void suggest()} disabled={aiBusy !== null} aria-keyshortcuts="Control+J">
              {aiBusy === 'suggest' ? 'Suggesting…' : 'Suggest'}
            </button>
            <button
              type="button"
              aria-expanded={rewriteOpen}
              aria-controls="rewrite-menu"
              onClick={openRewrite}
              disabled={aiBusy !== null || !draft.text.trim()}
            >
              {aiBusy === 'rewrite' ? 'Rewriting…' : 'Rewrite…'}
            </button>
            {restore && (
              <button type="button" onClick={undoAi} disabled={aiBusy !== null}>
                Restore
              </button>
            )}
          </span>
        )}
        <button
          type="button"
          class="primary"
          onClick={() => void send()}
          disabled={sending || (!draft.text.trim() && stored.length === 0) || !filesReady || (closed && !draft.note)}
        >
          {sending ? 'Sending…' : draft.note ? 'Add note' : 'Send'}
        </button>
      </div>
    </div>
  );
}
