import type { Executor } from '../db/database.js';

/**
 * Records a use of an API key or a personal-access token at `at`, unless one was recorded
 * since `since` (by another request, or another process).
 */
export async function recordCredentialUse(
  db: Executor,
  table: 'api_keys' | 'personal_access_tokens',
  id: number,
  at: Date,
  since: Date,
): Promise<void> {
  await db
    .updateTable(table)
    .set({ last_used_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', since)]))
    .execute();
}
