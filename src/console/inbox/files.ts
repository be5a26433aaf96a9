import type { Attachment } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { session } from '../shared/session';
import { createStore } from '../shared/store';

/**
 * Files an agent attached to the next message of each conversation, uploaded at once through
 * the typed client (`POST /v1/attachments`, docs/attachments.md) and sent with the reply by
 * their ids. Kept in memory per thread, so moving to another conversation keeps them; a page
 * reload drops them (a File cannot be kept in sessionStorage like the draft's text).
 */
export interface ChosenFile {
  key: string;
  name: string;
  size: number;
  state: 'uploading' | 'stored' | 'failed';
  attachment?: Attachment;
  /** Why the upload was refused (too large, storage unavailable…). */
  error?: string;
}

export const chosenFiles = createStore<ReadonlyMap<number, readonly ChosenFile[]>>(new Map());
const NONE: readonly ChosenFile[] = [];

export const filesOf = (all: ReadonlyMap<number, readonly ChosenFile[]>, threadId: number) => all.get(threadId) ?? NONE;

function edit(threadId: number, change: (list: readonly ChosenFile[]) => readonly ChosenFile[]) {
  chosenFiles.update((all) => new Map(all).set(threadId, change(filesOf(all, threadId))));
}

const patch = (threadId: number, key: string, fields: Partial<ChosenFile>) =>
  edit(threadId, (list) => list.map((f) => (f.key === key ? { ...f, ...fields } : f)));

/** A pasted image has no useful name: one from its type, so the recipient sees a sensible file. */
function nameOf(file: File): string {
  if (file.name && file.name !== 'image.png') return file.name;
  return `pasted-image.${file.type.split('/')[1] || 'png'}`;
}

export function attachFiles(threadId: number, files: readonly File[]): void {
  const client = session.get()?.client;
  if (!client) return;
  for (const file of files) {
    const key = crypto.randomUUID();
    const name = nameOf(file);
    edit(threadId, (list) => [...list, { key, name, size: file.size, state: 'uploading' }]);
    client.attachments.upload(file, name).then(
      (attachment) => patch(threadId, key, { state: 'stored', attachment }),
      (err: unknown) => patch(threadId, key, { state: 'failed', error: errorText(err) }),
    );
  }
}

export const removeFile = (threadId: number, key: string) => edit(threadId, (list) => list.filter((f) => f.key !== key));
export const clearFiles = (threadId: number) => edit(threadId, () => NONE);

session.subscribe((s) => {
  if (!s) chosenFiles.set(new Map());
});

/**
 * How many files one message may carry on a channel (mirrors the service's rule, see
 * docs/attachments.md "Outbound"): one on WhatsApp, Messenger, Instagram, WAHA, SMS and
 * Telegram, several by e-mail and live chat, none elsewhere. A note is never sent, so it
 * takes the most any reply may.
 */
const MAX_FILES = 10;
const ONE_FILE = new Set(['whatsapp', 'whatsapp_session', 'social_one', 'social_two', 'sms', 'telegram']);
const MANY_FILES = new Set(['email', 'livechat']);

export function filesPerMessage(integrationKey: string, note: boolean): number {
  if (note) return MAX_FILES;
  const base = integrationKey.split('.')[0]!;
  return ONE_FILE.has(base) ? 1 : MANY_FILES.has(base) ? MAX_FILES : 0;
}
