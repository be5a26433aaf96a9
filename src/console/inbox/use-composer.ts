import { useEffect, useState } from 'preact/hooks';
import type { CannedResponse, ReplyRequest, Thread, WhatsappTemplate } from '../../../packages/client/src/index';
import { contactEmailOf, fillVariables } from '../../canned-responses/variables';
import { errorText, InboxClientError, unanswered } from '../shared/api';
import { renewing, type Session, session } from '../shared/session';
import { useStore } from '../shared/store';
import { useLoad } from '../shared/use-load';

/** Waits before retrying a send the network dropped: same key each time. */
const RETRY_MS = [500, 1_000, 2_000, 4_000];

/**
 * How a send ended: `sent`; `refused` (nothing was sent, so the next try is a new message with
 * a new key); or `unsure` (the service may have it: only the same key may try again).
 */
export type SendOutcome = 'sent' | 'refused' | 'unsure';

/**
 * Sending a thread's replies, with the state the composer shows: whether a send is under way,
 * its error, and the channel's refusal when the reply window closed (`422 window_closed`).
 */
export function useReply(thread: Thread) {
  const s = useStore(session)!;
  const [sending, setSending] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [windowClosed, setWindowClosed] = useState<string | null>(null);

  useEffect(() => {
    setError(null);
    setWindowClosed(null);
  }, [thread.id]);

  const closedByClock = thread.replyWindowEndsAt !== null && new Date(thread.replyWindowEndsAt).getTime() < Date.now();

  /** Sends under `key`, retrying a dropped connection with the same key so the contact gets it once. */
  async function send(body: ReplyRequest, key: string): Promise<SendOutcome> {
    setSending(true);
    setError(null);
    try {
      for (let attempt = 0; ; attempt++) {
        try {
          // A token that ended while the agent wrote (a refresh in another tab, a laptop that
          // slept past it) is renewed and the reply goes again, with the same key; a session
          // that really ended returns the console to sign-in, and the draft waits.
          await renewing(() => s.client.reply(thread.id, body, { idempotencyKey: key }));
          return 'sent';
        } catch (err) {
          // The request may have reached the service: only the same key may try again.
          if (unanswered(err) && attempt < RETRY_MS.length) {
            await new Promise((r) => setTimeout(r, RETRY_MS[attempt]));
            continue;
          }
          if (err instanceof InboxClientError && err.code === 'window_closed') {
            setWindowClosed(err.message);
            return 'refused';
          }
          if (err instanceof InboxClientError && !unanswered(err) && err.status < 500 && err.status !== 429) {
            setError(errorText(err));
            return 'refused';
          }
          setError(`Not sent yet: ${errorText(err)} Press Enter to try again; it will not be sent twice.`);
          return 'unsure';
        }
      }
    } finally {
      setSending(false);
    }
  }

  return { sending, error, windowClosed, closedByClock, reopened: () => setWindowClosed(null), send };
}

/**
 * A canned response's text with its variables filled in for this thread and the signed-in
 * agent (docs/automation.md): the contact and the workspace are read when one has any.
 */
export async function fillCanned(s: Session, thread: Thread, text: string): Promise<string> {
  if (!text.includes('{{')) return text;
  const [contact, workspace] = await Promise.all([s.client.contact(thread.contactId), s.client.workspace()]);
  return fillVariables(text, {
    contact: { name: contact.name, email: contactEmailOf(contact), attributes: contact.attributes },
    agent: { name: s.user.name },
    workspace: { name: workspace.name },
  });
}

let canned: Promise<CannedResponse[]> | null = null;

/** The canned responses, read again each time the menu opens so one a colleague just added is there. */
export function useCannedResponses(open: boolean): CannedResponse[] {
  const s = useStore(session)!;
  const [responses, setResponses] = useState<CannedResponse[]>([]);
  useEffect(() => {
    if (!open) {
      canned = null;
      return;
    }
    canned ??= s.client.page<CannedResponse>('/v1/canned-responses', { limit: 100 }).then((p) => p.data);
    canned.then(setResponses).catch(() => {
      canned = null;
    });
  }, [open]);
  return responses;
}

/**
 * The connection's approved templates, for a reply outside the window: null while loading, and
 * none when they could not be read (the error says why).
 */
export function useTemplates(connectionId: number) {
  const s = useStore(session)!;
  const { data, error, setError } = useLoad<WhatsappTemplate[]>(
    () => s.client.templates(connectionId).then((list) => list.filter((t) => t.status === 'APPROVED')),
    [connectionId],
  );
  return { templates: data ?? (error ? [] : null), error, setError };
}
