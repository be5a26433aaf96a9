import { Readable } from 'node:stream';
import type { Archiver } from 'archiver';
import { attachmentsOf } from '../attachments/attachments.queries.js';
import { attachmentResource, contentUrl } from '../attachments/attachments.resources.js';
import { listHandles } from '../contacts/contacts.queries.js';
import { contactResource } from '../contacts/contacts.resources.js';
import type { Deps } from '../deps.js';
import { messageResource } from '../messaging/messaging.resources.js';
import { findThreadViews } from '../threads/threads.queries.js';
import { threadResource } from '../threads/threads.resources.js';
import { contactsPage, messagesPage, threadIdsPage } from './exports.queries.js';

/** Rows read per query: each page is shaped, written to the zip and dropped before the next. */
const PAGE = 200;

/** What one export covers: a workspace, or one contact of it. */
export interface ExportScope {
  workspaceId: number;
  contactId: number | null;
}

/** A file's name inside the zip: its id first (unique), then its own name made safe for any unzip. */
export function fileEntryName(id: number, filename: string | null): string {
  const safe = (filename ?? '')
    .replace(/[^A-Za-z0-9._ -]/g, '_')
    .replace(/^\.+/, '')
    .slice(0, 100);
  return `files/${id}${safe ? `-${safe}` : ''}`;
}

/**
 * The zip of an export (docs/privacy.md, "Export"), streamed into the attachment store under
 * `key`: `export.json` (what it is), `contact.json` or `contacts.json`, `threads/<id>.json`
 * (the Thread and its messages and notes, oldest first, as the API shows them) and
 * `files/<attachmentId>-<name>` (the stored bytes). Every part is read page by page and each
 * entry is written before the next is read, so memory stays flat whatever the workspace holds.
 */
export async function writeExportZip(deps: Pick<Deps, 'db' | 'storage' | 'config' | 'now'>, scope: ExportScope, key: string) {
  // Loaded here: only a process that builds an export needs it.
  const { default: archiver } = await import('archiver');
  const archive = archiver('zip', { zlib: { level: 6 } });
  const stored = deps.storage.put(key, archive, { maxBytes: Number.MAX_SAFE_INTEGER });
  // The store stops reading only by failing: then no entry would ever finish.
  const storeFailed = stored.then(() => {
    throw new Error('the store stopped reading the export');
  });
  storeFailed.catch(() => {});
  const add = (source: AsyncIterable<string> | Readable, name: string) =>
    Promise.race([appendOne(archive, source instanceof Readable ? source : Readable.from(bytesOf(source)), name), storeFailed]);

  const url = contentUrl(deps.config.publicUrl);
  await add(
    jsonChunks({ kind: scope.contactId === null ? 'workspace' : 'contact', ...scope, exportedAt: deps.now().toISOString() }),
    'export.json',
  );
  await add(contactsJson(deps, scope), scope.contactId === null ? 'contacts.json' : 'contact.json');
  const files: { id: number; filename: string | null; key: string }[] = [];
  for (let after = 0; ; ) {
    const ids = await threadIdsPage(deps.db, scope.workspaceId, scope.contactId, after, PAGE);
    if (ids.length === 0) break;
    for (const view of await findThreadViews(deps.db, ids)) {
      await add(threadJson(deps, view, url, files), `threads/${view.id}.json`);
      // The thread's files follow it, so the list of names waiting is one thread's at most.
      for (const f of files.splice(0)) {
        const bytes = await deps.storage.get(f.key);
        if (bytes) await add(bytes, fileEntryName(f.id, f.filename));
      }
    }
    after = ids.at(-1)!;
  }
  await Promise.race([archive.finalize(), storeFailed]);
  return stored;
}

function appendOne(archive: Archiver, source: Readable, name: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const onEntry = () => {
      archive.off('error', onError);
      resolve();
    };
    const onError = (err: Error) => {
      archive.off('entry', onEntry);
      reject(err);
    };
    archive.once('entry', onEntry);
    archive.once('error', onError);
    archive.append(source, { name });
  });
}

async function* bytesOf(chunks: AsyncIterable<string>) {
  for await (const c of chunks) yield Buffer.from(c, 'utf8');
}

async function* jsonChunks(value: unknown) {
  yield `${JSON.stringify(value, null, 2)}\n`;
}

/** The contact (one object) or every live contact of the workspace (an array), with handles. */
async function* contactsJson(deps: Pick<Deps, 'db'>, scope: ExportScope) {
  const whole = scope.contactId === null;
  if (whole) yield '[\n';
  let first = true;
  for (let after = 0; ; ) {
    const rows = await contactsPage(deps.db, scope.workspaceId, scope.contactId, after, PAGE);
    if (rows.length === 0) break;
    const handles = await listHandles(
      deps.db,
      rows.map((r) => r.id),
    );
    for (const row of rows) {
      yield `${first || !whole ? '' : ',\n'}${JSON.stringify(contactResource(row, handles))}`;
      first = false;
    }
    after = rows.at(-1)!.id;
    if (!whole) break;
  }
  if (whole) yield '\n]\n';
  else if (first) yield 'null\n';
}

/** `{thread, messages}`: the messages written as they are read; the thread's stored files noted in `files`. */
async function* threadJson(
  deps: Pick<Deps, 'db'>,
  view: Awaited<ReturnType<typeof findThreadViews>>[number],
  url: (id: number) => string,
  files: { id: number; filename: string | null; key: string }[],
) {
  yield `{"thread":${JSON.stringify(threadResource(view))},"messages":[\n`;
  let first = true;
  for (let after = 0; ; ) {
    const rows = await messagesPage(deps.db, view.id, after, PAGE);
    if (rows.length === 0) break;
    const attachments = await attachmentsOf(
      deps.db,
      rows.map((m) => m.id),
    );
    for (const m of rows) {
      const own = attachments.get(m.id) ?? [];
      for (const a of own) if (a.status === 'stored' && a.storage_key) files.push({ id: a.id, filename: a.filename, key: a.storage_key });
      const resource = messageResource(
        m,
        own.map((a) => attachmentResource(a, url)),
      );
      yield `${first ? '' : ',\n'}${JSON.stringify(resource)}`;
      first = false;
    }
    after = rows.at(-1)!.id;
  }
  yield '\n]}\n';
}
