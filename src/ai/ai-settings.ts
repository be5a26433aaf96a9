import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import { SECRET } from '../audit/audit.js';
import { open, seal } from '../crypto/secret-box.js';
import type { Executor } from '../db/database.js';
import type { WorkspaceAiTable } from '../db/types.js';
import { errors } from '../http/errors.js';
import { Nullable } from '../http/schemas.js';
import { describeRefusal, ipLiteral, refusedRange } from '../net/address-guard.js';
import { findAiSettings, upsertAiSettings } from './ai.queries.js';

/**
 * The workspace's `ai` setting (docs/ai.md): an OpenAI-compatible endpoint, its model and key.
 * The key is write-only: sealed at rest under INBOX_SECRET_KEY and never answered.
 */
export const AiSettingsResource = Type.Object(
  {
    enabled: Type.Boolean({ description: 'off by default; while off every AI route answers 409 `ai_disabled`' }),
    baseUrl: Nullable(Type.String({ description: "the endpoint's base URL: requests go to `<baseUrl>/chat/completions`" })),
    model: Nullable(Type.String()),
    apiKeySet: Type.Boolean({ description: 'whether a key is stored (the key itself is never shown)' }),
  },
  { title: 'AiSettings' },
);
export type AiSettingsResource = Static<typeof AiSettingsResource>;

export const AiSettingsPatch = Type.Object(
  {
    enabled: Type.Optional(Type.Boolean()),
    baseUrl: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 2048 }))),
    model: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 200 }))),
    apiKey: Type.Optional(Nullable(Type.String({ minLength: 1, maxLength: 4096, description: 'write-only; null removes it' }))),
  },
  { additionalProperties: false, minProperties: 1 },
);
export type AiSettingsPatch = Static<typeof AiSettingsPatch>;

/** What a call needs: the endpoint and the opened key. */
export interface AiEndpoint {
  baseUrl: string;
  model: string;
  apiKey: string | undefined;
}

const aad = (workspaceId: number) => `workspace-ai:${workspaceId}`;

/** Where the keys are sealed and what binds them: for `inbox rotate-secret-key`. */
export const SEALED_AI_KEYS = { table: 'workspace_ai', column: 'api_key_sealed', idColumn: 'workspace_id', aad } as const;

const OFF: AiSettingsResource = { enabled: false, baseUrl: null, model: null, apiKeySet: false };

function resource(row: Selectable<WorkspaceAiTable> | undefined): AiSettingsResource {
  if (!row) return OFF;
  return { enabled: row.enabled, baseUrl: row.base_url, model: row.model, apiKeySet: row.api_key_sealed !== null };
}

export async function aiSettings(db: Executor, workspaceId: number): Promise<AiSettingsResource> {
  return resource(await findAiSettings(db, workspaceId));
}

/**
 * A base URL the service may call: http(s), no credentials in it, and (unless
 * INBOX_ALLOW_PRIVATE_AI) not a literal non-public address. A name is checked again at every
 * call, where it resolves (./ai-client.ts).
 */
function checkBaseUrl(raw: string, allowPrivate: boolean): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw errors.validation('ai.baseUrl: not a URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw errors.validation('ai.baseUrl: must be http or https');
  if (url.username || url.password) throw errors.validation('ai.baseUrl: no credentials in the URL; set ai.apiKey');
  const literal = ipLiteral(url);
  const range = literal && !allowPrivate ? refusedRange(literal) : undefined;
  if (literal && range)
    throw errors.validation(`ai.baseUrl: ${describeRefusal(literal, literal, range)} (INBOX_ALLOW_PRIVATE_AI=true allows it)`);
  return raw.replace(/\/+$/, '');
}

/** The setting as an audit entry shows it: the key only as `"[set]"`, or null when there is none. */
function audited(row: Selectable<WorkspaceAiTable> | undefined) {
  const { apiKeySet, ...shown } = resource(row);
  return { ...shown, apiKey: apiKeySet ? SECRET : null };
}

/**
 * Applies a patch of the `ai` setting in the caller's transaction. Turning it on needs a base
 * URL and a model (422 otherwise). Answers the setting as it now is, and the audit's view of
 * it before and after (the key only as `"[set]"`).
 */
export async function changeAiSettings(
  trx: Executor,
  deps: { secretKey: Buffer; allowPrivate: boolean; now: Date },
  workspaceId: number,
  patch: AiSettingsPatch,
) {
  const before = await findAiSettings(trx, workspaceId);
  const baseUrl = typeof patch.baseUrl === 'string' ? checkBaseUrl(patch.baseUrl, deps.allowPrivate) : patch.baseUrl;
  const apiKeySealed = typeof patch.apiKey === 'string' ? seal(deps.secretKey, patch.apiKey, aad(workspaceId)) : patch.apiKey;
  const row = await upsertAiSettings(trx, workspaceId, { baseUrl, model: patch.model, apiKeySealed, enabled: patch.enabled }, deps.now);
  if (row.enabled && (!row.base_url || !row.model)) throw errors.validation('ai: set baseUrl and model to turn AI assist on');
  return { setting: resource(row), before: audited(before), after: audited(row) };
}

/** The endpoint of a workspace whose AI assist is on; 409 `ai_disabled` otherwise. */
export async function aiEndpoint(db: Executor, keys: readonly Buffer[], workspaceId: number): Promise<AiEndpoint> {
  const row = await findAiSettings(db, workspaceId);
  if (!row?.enabled || !row.base_url || !row.model) throw errors.aiDisabled();
  // A key that does not open (another INBOX_SECRET_KEY) fails the call, never the process.
  let apiKey: string | undefined;
  if (row.api_key_sealed) {
    try {
      apiKey = open(keys, row.api_key_sealed, aad(workspaceId)).toString('utf8');
    } catch {
      throw errors.aiUnavailable('the stored API key does not open under INBOX_SECRET_KEY; set ai.apiKey again');
    }
  }
  return { baseUrl: row.base_url, model: row.model, apiKey };
}
