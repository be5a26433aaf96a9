import type { Executor } from '../db/database.js';

/** A single sign-on started: what its callback must find (migration 0059). Expired ones go on the way. */
export async function insertSsoLogin(
  db: Executor,
  row: { stateHash: string; workspaceId: number; nonce: string; codeVerifier: string; expiresAt: Date },
  now: Date,
): Promise<void> {
  await db.deleteFrom('sso_logins').where('expires_at', '<=', now).execute();
  await db
    .insertInto('sso_logins')
    .values({
      state_hash: row.stateHash,
      workspace_id: row.workspaceId,
      nonce: row.nonce,
      code_verifier: row.codeVerifier,
      expires_at: row.expiresAt,
    })
    .execute();
}

/** Spends the sign-in a state names, once: a second callback with the same state finds nothing. */
export async function takeSsoLogin(db: Executor, stateHash: string, now: Date) {
  return db
    .deleteFrom('sso_logins')
    .where('state_hash', '=', stateHash)
    .where('expires_at', '>', now)
    .returning(['workspace_id', 'nonce', 'code_verifier'])
    .executeTakeFirst();
}

/** The `sso` setting's sealed client secret of a workspace. */
export async function findSsoClientSecret(db: Executor, workspaceId: number): Promise<Buffer | null> {
  const row = await db.selectFrom('workspaces').select('sso_client_secret').where('id', '=', workspaceId).executeTakeFirst();
  return row?.sso_client_secret ?? null;
}
