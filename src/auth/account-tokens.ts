import { randomBytes } from 'node:crypto';
import { sha256Hex } from '../crypto/hmac.js';
import type { Executor } from '../db/database.js';
import type { AccountTokenKind } from '../db/types.js';

/** docs/accounts.md: a reset link lives 1 hour, an invite 7 days; the setup link until used. */
export const RESET_TOKEN_SECONDS = 3600;
export const INVITE_TOKEN_SECONDS = 7 * 24 * 3600;

/** The console page each kind of link opens. */
const PAGES: Record<AccountTokenKind, string> = { password_reset: 'reset', invite: 'invite', setup: 'setup' };

/**
 * `<INBOX_PUBLIC_URL>/app/<page>#token=…`. The token rides in the fragment, which browsers
 * never send: it stays out of proxies' access logs and `Referer` headers.
 */
export function accountLink(publicUrl: string, kind: AccountTokenKind, token: string): string {
  return `${publicUrl}/app/${PAGES[kind]}#token=${token}`;
}

/**
 * A new one-time token; only its SHA-256 is stored. `lifetimeSeconds` undefined: valid until
 * used. Returns the token itself, which exists nowhere else once the caller has sent it.
 */
export async function issueAccountToken(
  db: Executor,
  row: { kind: AccountTokenKind; userId: number | null; now: Date; lifetimeSeconds?: number },
): Promise<{ token: string; expiresAt: Date | null }> {
  const token = randomBytes(32).toString('base64url');
  const expiresAt = row.lifetimeSeconds === undefined ? null : new Date(row.now.getTime() + row.lifetimeSeconds * 1000);
  await db
    .insertInto('account_tokens')
    .values({ kind: row.kind, token_hash: sha256Hex(token), user_id: row.userId, created_at: row.now, expires_at: expiresAt })
    .execute();
  return { token, expiresAt };
}

/**
 * Spends a token of `kind`: only once (a conditional update, so two requests racing with one
 * token cannot both win), only before it expires. Returns its user (null for setup), or
 * undefined when the token is unknown, of another kind, used or expired.
 */
export async function consumeAccountToken(db: Executor, kind: AccountTokenKind, token: string, now: Date) {
  return db
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', sha256Hex(token))
    .where('kind', '=', kind)
    .where('used_at', 'is', null)
    .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', now)]))
    .returning(['id', 'user_id'])
    .executeTakeFirst();
}

/**
 * Spends every other open token of `kind` of a user (null: the setup tokens, which have
 * none): a reset, an accepted invite or a finished setup ends the older links.
 */
export async function retireAccountTokens(db: Executor, kind: AccountTokenKind, userId: number | null, now: Date): Promise<void> {
  await db
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('kind', '=', kind)
    .where('user_id', userId === null ? 'is' : '=', userId)
    .where('used_at', 'is', null)
    .execute();
}
