import { sql } from 'kysely';
import { SEALED_AI_KEYS } from '../ai/ai-settings.js';
import { SEALED_TOTP_SECRETS } from '../auth/two-factor.service.js';
import { SEALED_CREDENTIALS } from '../connections/connection-credentials.js';
import { SEALED_WEBHOOK_SECRETS } from '../connections/webhook-secrets.js';
import { open, SecretBoxError, seal } from '../crypto/secret-box.js';
import type { Db } from '../db/database.js';
import { SEALED_ENDPOINT_SECRETS } from '../webhooks-out/endpoint-secrets.js';
import { SEALED_SSO_SECRETS } from '../workspaces/sso-setting.js';

/** A column of sealed values, each bound (`aad`) to its row's id. */
interface SealedColumn {
  table: string;
  column: string;
  /** The row's key, when it is not `id`. */
  idColumn?: string;
  aad: (id: number) => string;
}

/** Every sealed column of the service: a feature that seals a new secret adds its column here. */
export const SEALED_COLUMNS: readonly SealedColumn[] = [
  SEALED_CREDENTIALS,
  SEALED_WEBHOOK_SECRETS,
  ...SEALED_ENDPOINT_SECRETS,
  SEALED_TOTP_SECRETS,
  SEALED_SSO_SECRETS,
  SEALED_AI_KEYS,
];

export interface ColumnRotation {
  /** `table.column` */
  column: string;
  /** Sealed again under the new key. */
  resealed: number;
  /** Already under the new key (a run before this one, or sealed since). */
  current: number;
  /** Opened by neither key: left as they are, and named. */
  unreadable: number[];
}

const BATCH = 200;

/**
 * `inbox rotate-secret-key` (docs/security.md, "Secret key rotation"): every sealed value that
 * opens only with `previous` is sealed again under `current`, row by row in batches, each
 * batch its own transaction with its rows locked, so the command can be stopped at any point
 * and run again: a value already under `current` is left alone. A value neither key opens is
 * reported, never changed.
 */
export async function rotateSecretKey(
  db: Db,
  keys: { current: Buffer; previous: Buffer },
  columns: readonly SealedColumn[] = SEALED_COLUMNS,
): Promise<ColumnRotation[]> {
  const report: ColumnRotation[] = [];
  for (const c of columns) {
    const out: ColumnRotation = { column: `${c.table}.${c.column}`, resealed: 0, current: 0, unreadable: [] };
    for (let after = 0; ; ) {
      const ids = await db.transaction().execute(async (trx) => {
        const key = sql.ref(c.idColumn ?? 'id');
        const { rows } = await sql<{ id: number; sealed: Buffer }>`
          SELECT ${key} AS id, ${sql.ref(c.column)} AS sealed FROM ${sql.table(c.table)}
          WHERE ${key} > ${after} AND ${sql.ref(c.column)} IS NOT NULL
          ORDER BY ${key} LIMIT ${BATCH} FOR UPDATE`.execute(trx);
        for (const row of rows) {
          const id = Number(row.id);
          const aad = c.aad(id);
          if (opens(keys.current, row.sealed, aad)) {
            out.current++;
            continue;
          }
          if (!opens(keys.previous, row.sealed, aad)) {
            out.unreadable.push(id);
            continue;
          }
          const resealed = seal(keys.current, open(keys.previous, row.sealed, aad), aad);
          await sql`UPDATE ${sql.table(c.table)} SET ${sql.ref(c.column)} = ${resealed} WHERE ${key} = ${id}`.execute(trx);
          out.resealed++;
        }
        return rows.map((r) => Number(r.id));
      });
      if (ids.length < BATCH) break;
      after = ids.at(-1)!;
    }
    report.push(out);
  }
  return report;
}

function opens(key: Buffer, sealed: Buffer, aad: string): boolean {
  try {
    open(key, sealed, aad);
    return true;
  } catch (err) {
    if (err instanceof SecretBoxError) return false;
    throw err;
  }
}
