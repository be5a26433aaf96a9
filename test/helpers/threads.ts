import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import type { MessageKind, ThreadStatus } from '../../src/db/types.js';
import type { Deps } from '../../src/deps.js';
import { makeUser } from './factories.js';

/** A thread of its own contact on `connection`, in the state a test needs. */
export async function seedThread(
  deps: Deps,
  connection: { id: number; workspaceId: number },
  options: { status?: ThreadStatus; assigneeId?: number | null; labels?: string[]; lastMessageAt?: Date } = {},
) {
  const contact = await deps.db
    .insertInto('contacts')
    .values({ workspace_id: connection.workspaceId, name: `Contact ${randomBytes(3).toString('hex')}` })
    .returning('id')
    .executeTakeFirstOrThrow();
  const status = options.status ?? 'open';
  return deps.db
    .insertInto('threads')
    .values({
      workspace_id: connection.workspaceId,
      connection_id: connection.id,
      contact_id: contact.id,
      status,
      snoozed_until: status === 'snoozed' ? new Date(Date.now() + 3_600_000) : null,
      assignee_id: options.assigneeId ?? null,
      labels: options.labels ?? [],
      last_message_at: options.lastMessageAt ?? new Date(),
      last_message_preview: null,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A message in `thread`: an inbound message by default, or a note or activity line. */
export async function seedMessage(
  deps: Deps,
  thread: { id: number; workspace_id: number; connection_id: number },
  text: string,
  options: { kind?: MessageKind; createdAt?: Date } = {},
) {
  const kind = options.kind ?? 'message';
  return deps.db
    .insertInto('messages')
    .values({
      workspace_id: thread.workspace_id,
      thread_id: thread.id,
      connection_id: thread.connection_id,
      direction: kind === 'message' ? 'inbound' : 'outbound',
      external_id: kind === 'message' ? `ext-${randomBytes(6).toString('hex')}` : null,
      text,
      status: kind === 'message' ? 'received' : 'sent',
      kind,
      private: kind !== 'message',
      created_at: options.createdAt ?? new Date(),
    })
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A user of the workspace, signed in: its row and the headers of its JWT. */
export async function signedInUser(app: FastifyInstance, deps: Deps, workspaceId: number, roles: string[] = ['agent']) {
  const { user, password } = await makeUser(deps, workspaceId, { roles });
  const res = await app.inject({ method: 'POST', url: '/api/user/login', payload: { email: user.email, password } });
  if (res.statusCode !== 200) throw new Error(`login failed: ${res.body}`);
  return { user, headers: { authorization: `Bearer ${res.json().access_token as string}` } };
}
