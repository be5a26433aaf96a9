import type { Executor } from '../db/database.js';

/** Keeps a new TOTP secret (sealed) for a user who has not turned two-factor sign-in on; false when they have. */
export async function setPendingTotpSecret(db: Executor, userId: number, sealed: Buffer): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ totp_secret: sealed, totp_last_step: null })
    .where('id', '=', userId)
    .where('totp_enabled_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Turns two-factor sign-in on, the setup's code being the last accepted; false when it was on already. */
export async function enableTotp(db: Executor, userId: number, step: number, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ totp_enabled_at: at, totp_last_step: step })
    .where('id', '=', userId)
    .where('totp_enabled_at', 'is', null)
    .where('totp_secret', 'is not', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Records the step of an accepted code, only when it is newer than the last: of two requests
 * with the same code at once, one moves the step and the other finds it moved (false).
 */
export async function advanceTotpStep(db: Executor, userId: number, step: number): Promise<boolean> {
  const row = await db
    .updateTable('users')
    .set({ totp_last_step: step })
    .where('id', '=', userId)
    .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Turns two-factor sign-in off: the secret and every recovery code go. */
export async function clearTwoFactor(db: Executor, userId: number): Promise<void> {
  await db.updateTable('users').set({ totp_secret: null, totp_enabled_at: null, totp_last_step: null }).where('id', '=', userId).execute();
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
}

/** A new set of recovery codes (hashes) replaces the old. */
export async function replaceRecoveryCodes(db: Executor, userId: number, hashes: string[]): Promise<void> {
  await db.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
  await db
    .insertInto('recovery_codes')
    .values(hashes.map((code_hash) => ({ user_id: userId, code_hash })))
    .execute();
}

/** Spends a recovery code: once only (a concurrent second use finds it spent). */
export async function spendRecoveryCode(db: Executor, userId: number, hash: string, at: Date): Promise<boolean> {
  const row = await db
    .updateTable('recovery_codes')
    .set({ used_at: at })
    .where('user_id', '=', userId)
    .where('code_hash', '=', hash)
    .where('used_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function countRecoveryCodesLeft(db: Executor, userId: number): Promise<number> {
  const row = await db
    .selectFrom('recovery_codes')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}
