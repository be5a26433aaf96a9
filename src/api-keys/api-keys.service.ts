import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { randomToken, sha256Hex } from '../crypto/hmac.js';
import type { Executor } from '../db/database.js';
import type { ApiKeysTable } from '../db/types.js';
import { Nullable, Timestamp } from '../http/schemas.js';
import { insertApiKey } from './api-keys.queries.js';

/**
 * Scopes an API key may carry, each including the one before it: `read` (GET routes),
 * `write` (every other tenant route), `admin` (dead letters, key management).
 */
export const API_KEY_SCOPES = ['admin', 'read', 'write'] as const;
/** What a key created without scopes gets: the least, never nothing and never more. */
export const DEFAULT_API_KEY_SCOPES = ['read'];

/** A new plain key and what is stored of it: only its SHA-256 and a display prefix. */
export function newApiKeySecret(): { key: string; keyHash: string; keyPrefix: string } {
  const key = randomToken('inbox_ak_', 24);
  return { key, keyHash: sha256Hex(key), keyPrefix: key.slice(0, 14) };
}

export const ApiKeyResource = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    scopes: Type.Array(Type.String()),
    prefix: Type.String({ description: 'the first characters of the key, to recognise it' }),
    createdAt: Timestamp,
    lastUsedAt: Nullable(Timestamp),
  },
  { title: 'ApiKey' },
);
/** A key as created or rotated: the plain `key`, shown in this answer only. */
export const IssuedApiKey = Type.Object({ ...ApiKeyResource.properties, key: Type.String() }, { title: 'IssuedApiKey' });

export function apiKeyResource(row: Selectable<ApiKeysTable>): Static<typeof ApiKeyResource> {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    prefix: row.key_prefix,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
  };
}

/** Creates a key (no scopes → `read`); the plain `key` is in this answer only and never stored. */
export async function issueApiKey(db: Executor, workspaceId: number, name: string, scopes: string[]) {
  const secret = newApiKeySecret();
  const row = await insertApiKey(db, {
    workspaceId,
    name,
    scopes: scopes.length > 0 ? [...new Set(scopes)] : DEFAULT_API_KEY_SCOPES,
    ...secret,
  });
  return { ...apiKeyResource(row), key: secret.key };
}
