import type { Selectable } from 'kysely';
import type { Static } from 'typebox';
import type { Executor } from '../db/database.js';
import type { ContactsTable, ThreadsTable } from '../db/types.js';
import type { Deps } from '../deps.js';
import { moveContactExports } from '../exports/exports.queries.js';
import { errors } from '../http/errors.js';
import { announce } from '../messaging/announce.js';
import type { Change } from '../messaging/announcements.js';
import { moveSla } from '../sla/sla.service.js';
import { routeWaiting } from '../threads/routing.js';
import { updateThread } from '../threads/thread-workflow.queries.js';
import { MAX_LABELS } from '../threads/thread-workflow.service.js';
import { findThreadViews } from '../threads/threads.queries.js';
import { attributesProblem, checkAttributes } from './contact-attributes.js';
import {
  absorbContact,
  type ContactPatch,
  findContact,
  foldThreads,
  listHandles,
  lockContacts,
  lockHandles,
  lockThreadsOf,
  reassignThread,
  updateContact,
} from './contacts.queries.js';
import { type ContactResource, contactResource } from './contacts.resources.js';

type Contact = Static<typeof ContactResource>;

async function withHandles(db: Executor, row: Selectable<ContactsTable>): Promise<Contact> {
  return contactResource(row, await listHandles(db, [row.id]));
}

export async function getContact(deps: Deps, workspaceId: number, id: number): Promise<Contact> {
  const row = await findContact(deps.db, workspaceId, id);
  if (!row) throw errors.notFound('contact');
  return withHandles(deps.db, row);
}

/** Changes a contact's name, e-mail, phone or attributes (which it replaces whole); `contact.updated`. */
export async function changeContact(deps: Deps, workspaceId: number, id: number, patch: ContactPatch): Promise<Contact> {
  if (patch.attributes !== undefined) checkAttributes(patch.attributes);
  return deps.db.transaction().execute(async (trx) => {
    const row = await updateContact(trx, workspaceId, id, patch, deps.now());
    if (!row) throw errors.notFound('contact');
    const contact = await withHandles(trx, row);
    await announce(deps, trx, [{ type: 'contact.updated', workspaceId, contact }], deps.now());
    return contact;
  });
}

const newestFirst = (a: Selectable<ThreadsTable>, b: Selectable<ThreadsTable>) =>
  b.last_message_at.getTime() - a.last_message_at.getTime() || b.id - a.id;

/**
 * Merges contact `otherId` into `intoId`, in one transaction: the other's handles, live chat
 * visitors, threads and exports become this one's, and the other is deleted (`contact.merged`, then
 * `thread.updated` for each thread that stays and changed).
 *
 * One thread per (connection, contact, conversation): where both have one on the same, this
 * contact's thread stays (its status and assignee with it) and the other's messages and labels
 * (up to the limit) move into it; the emptied thread is deleted. A connection only the other
 * contact used keeps its thread, now this contact's. Fields this contact lacks (name, e-mail,
 * phone) are taken from the other; attributes are joined, this contact's values winning, unless
 * the join would pass the limits (then this contact's stay as they are).
 */
export async function mergeContacts(deps: Deps, workspaceId: number, intoId: number, otherId: number) {
  if (intoId === otherId) throw errors.validation('a contact cannot be merged into itself');
  return deps.db.transaction().execute(async (trx) => {
    const now = deps.now();
    // Handle locks first, as the worker takes them before it touches contacts: the same order
    // in both, so neither waits on the other in a cycle.
    await lockHandles(trx, workspaceId, otherId);
    const locked = await lockContacts(trx, workspaceId, [intoId, otherId]);
    const into = locked.find((c) => c.id === intoId);
    const other = locked.find((c) => c.id === otherId);
    if (!into || !other) throw errors.notFound('contact');

    const threads = await lockThreadsOf(trx, [intoId, otherId]);
    // A thread is one per (connection, conversation) of a contact: e-mail conversations
    // (docs/email.md) stay apart, each the other contact's only where this one has none of it.
    const conversationOf = (t: (typeof threads)[number]) => `${t.connection_id}|${t.conversation_key}`;
    const conversations = new Set(threads.filter((t) => t.contact_id === otherId).map(conversationOf));
    // The threads that stay and change: their contact, or the messages folded into them.
    const changed: number[] = [];
    let freed = false;
    for (const conversation of conversations) {
      const mine = threads.filter((t) => conversationOf(t) === conversation && t.contact_id === intoId).sort(newestFirst);
      const theirs = threads.filter((t) => conversationOf(t) === conversation && t.contact_id === otherId).sort(newestFirst);
      const keep = mine[0] ?? theirs[0]!;
      if (keep.contact_id !== intoId) await reassignThread(trx, keep.id, intoId, now);
      const folded = theirs.filter((t) => t.id !== keep.id);
      freed ||= folded.some((t) => t.status === 'open' && t.assignee_id !== null);
      await foldThreads(
        trx,
        keep.id,
        folded.map((t) => t.id),
        now,
      );
      // The folded threads' labels stay with their messages: the kept thread's first, then
      // theirs, up to the limit. New labels may bring another SLA policy, as a PATCH's would.
      const labels = [...new Set([...keep.labels, ...folded.flatMap((t) => t.labels)])].slice(0, MAX_LABELS);
      if (labels.length > keep.labels.length) {
        await updateThread(trx, keep.id, { labels }, now);
        await moveSla(deps, trx, workspaceId, [{ thread: { ...keep, labels }, event: 'matched' }], now);
      }
      changed.push(keep.id);
    }

    const joined = { ...other.attributes, ...into.attributes };
    const fill: ContactPatch = {
      ...(into.name === null && other.name !== null ? { name: other.name } : {}),
      ...(into.email === null && other.email !== null ? { email: other.email } : {}),
      ...(into.phone === null && other.phone !== null ? { phone: other.phone } : {}),
      ...(attributesProblem(joined) === null ? { attributes: joined } : {}),
    };
    await moveContactExports(trx, workspaceId, otherId, intoId);
    const row = await absorbContact(trx, intoId, otherId, fill, now);
    const contact = await withHandles(trx, row);
    // Every thread change publishes thread.updated: the lists see each kept thread with its
    // new contact, last message and preview.
    const views = await findThreadViews(trx, changed);
    const changes: Change[] = [
      { type: 'contact.merged', workspaceId, contact, mergedContactId: otherId },
      ...views.map((thread): Change => ({ type: 'thread.updated', thread })),
    ];
    await announce(deps, trx, changes, deps.now());
    // A folded thread that was open and someone's leaves them room: the queue is looked at,
    // as when a thread of theirs is resolved (docs/teams.md, "The queue").
    if (freed) await routeWaiting(deps, trx, workspaceId, now);
    return contact;
  });
}
