import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { findReplyThread } from '../../src/replies/replies.queries.js';
import { findThreadViews } from '../../src/threads/threads.queries.js';
import { useTestContext } from '../helpers/app.js';
import { makeConnection, makeTenant } from '../helpers/factories.js';
import { seedThread } from '../helpers/threads.js';

// One pool connection: every statement below runs on the same backend, which keeps what it prepared.
const ctx = await useTestContext({ databaseOptions: { max: 1 } });
const { db } = ctx.deps;
const tenant = await makeTenant(ctx.deps);
const connection = await makeConnection(ctx.deps, tenant.workspace.id);
const thread = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
const reader = { kind: 'api_key' as const, workspaceId: tenant.workspace.id };

const prepared = async () =>
  (await sql<{ statement: string }>`SELECT statement FROM pg_prepared_statements`.execute(db)).rows.map((r) => r.statement);

describe("the reply route's prepared statements", () => {
  it('are prepared on the connection, and still run after a migration adds a column to threads', async () => {
    expect((await findThreadViews(db, [thread.id]))[0]).toMatchObject({ id: thread.id, integration_key: 'whatsapp' });
    expect(await findReplyThread(db, reader, thread.id)).toMatchObject({ id: thread.id });
    const statements = await prepared();
    expect(statements.some((s) => s.includes('"contacts"."name" as "contact_name"') && s.includes('ANY($1::bigint[])'))).toBe(true);
    expect(statements.some((s) => s.includes('"connections"."deleted_at" as "connection_deleted_at"'))).toBe(true);

    // What a newer release's migration does while this process runs: a statement that read
    // `threads.*` would now be refused ("cached plan must not change result type").
    await sql`ALTER TABLE threads ADD COLUMN added_by_a_later_release int`.execute(db);
    try {
      const [view] = await findThreadViews(db, [thread.id]);
      expect(view).toMatchObject({ id: thread.id, contact_id: thread.contact_id });
      expect(view).not.toHaveProperty('added_by_a_later_release');
      expect(await findReplyThread(db, reader, thread.id)).toMatchObject({ id: thread.id });
    } finally {
      await sql`ALTER TABLE threads DROP COLUMN added_by_a_later_release`.execute(db);
    }
  });

  it('reads many threads with one statement text, whatever their number', async () => {
    const other = await seedThread(ctx.deps, { id: connection.id, workspaceId: tenant.workspace.id });
    const before = (await prepared()).length;
    const views = await findThreadViews(db, [thread.id, other.id]);
    expect(views.map((v) => v.id).sort((a, b) => a - b)).toEqual([thread.id, other.id].sort((a, b) => a - b));
    expect(await prepared()).toHaveLength(before);
  });
});
