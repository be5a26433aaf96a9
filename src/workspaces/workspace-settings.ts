import type { Selectable } from 'kysely';
import { type Static, type TSchema, Type } from 'typebox';
import {
  AiSettingsPatch,
  type AiSettingsResource,
  AiSettingsResource as AiSettingsSchema,
  aiSettings,
  changeAiSettings,
} from '../ai/ai-settings.js';
import { changesOf, recordAudit, SECRET, type Trail } from '../audit/audit.js';
import { seal } from '../crypto/secret-box.js';
import type { Db, Executor } from '../db/database.js';
import type { WorkspacesTable } from '../db/types.js';
import { errors } from '../http/errors.js';
import { Timestamp } from '../http/schemas.js';
import { publishSightChanged } from '../realtime/publish.js';
import { BusinessHoursInputSetting, BusinessHoursSetting, checkBusinessHours } from '../sla/business-hours.js';
import { checkSsoSetting, SsoSetting, SsoSettingPatch, ssoSecretAad } from './sso-setting.js';
import { findWorkspace, setSsoClientSecret, updateWorkspaceSettings } from './workspaces.queries.js';

const setting = <T extends TSchema>(schema: T, fallback: Static<T>) => ({ schema, fallback });

/**
 * Every workspace setting with its schema and its default: adding a setting is one line here
 * (the API shape, the client's checked type and the stored value follow). Stored in
 * `workspaces.settings`, only once set; an absent one reads as its default.
 */
export const WORKSPACE_SETTINGS = {
  businessHours: setting(
    Type.With(BusinessHoursSetting, {
      description: 'when business-hours SLA clocks run and away replies stay quiet; null = always open (docs/sla.md)',
    }),
    null,
  ),
  assignOnReply: setting(Type.Boolean({ description: "a user's reply on an unassigned thread assigns it to them" }), true),
  restrictAgentsToTeams: setting(
    Type.Boolean({
      description: 'a user without the admin role sees only the threads of their teams, those of no team, and those assigned to them',
    }),
    false,
  ),
  require2fa: setting(
    Type.Boolean({
      description:
        'a user without two-factor sign-in can sign in but reach only its setup (403 `2fa_required` elsewhere; docs/security.md)',
    }),
    false,
  ),
  conversationRetentionDays: setting(
    Type.Union([Type.Integer({ minimum: 1, maximum: 36500 }), Type.Null()], {
      description:
        'threads resolved and silent for longer than this many days are deleted with their messages and files; null = kept (docs/privacy.md)',
    }),
    null,
  ),
  sso: setting(SsoSetting, null),
};

type Settings = typeof WORKSPACE_SETTINGS;
type SettingSchemas = { [K in keyof Settings]: Settings[K]['schema'] };
export type WorkspaceSettingValues = { [K in keyof Settings]: Static<Settings[K]['schema']> };

const schemas = Object.fromEntries(Object.entries(WORKSPACE_SETTINGS).map(([k, v]) => [k, v.schema])) as SettingSchemas;
const WorkspaceName = Type.String({ minLength: 1, maxLength: 200 });

/** The settings as the service reads them (every stored one, each else its default). */
export type WorkspaceSettings = { id: number; name: string } & WorkspaceSettingValues;

/**
 * The API's shape: the Workspace (`id`, `name`, `appId`, `createdAt`), its stored settings and
 * `ai` (docs/ai.md), which keeps its own row and a sealed key.
 */
export const WorkspaceSettingsResource = Type.Object(
  {
    id: Type.Integer(),
    name: WorkspaceName,
    appId: Type.String({ description: "the workspace's app (`app_…`): `auth.appId` of its users, `appId` of its inbox rows" }),
    createdAt: Timestamp,
    ...schemas,
    ai: AiSettingsSchema,
  },
  { title: 'WorkspaceSettings' },
);

export const WorkspaceSettingsPatch = Type.Partial(
  Type.Object({
    name: WorkspaceName,
    ...schemas,
    businessHours: Type.With(BusinessHoursInputSetting, { description: `${schemas.businessHours.description}; holidays may be left out` }),
    sso: SsoSettingPatch,
    ai: AiSettingsPatch,
  }),
  {
    additionalProperties: false,
    minProperties: 1,
  },
);

/** The settings as they apply: each stored value, else its default. */
export function settingValues(stored: Record<string, unknown>): WorkspaceSettingValues {
  const entries = Object.entries(WORKSPACE_SETTINGS).map(([k, v]) => [k, k in stored ? stored[k] : v.fallback]);
  return Object.fromEntries(entries) as WorkspaceSettingValues;
}

function settingsResource(row: Selectable<WorkspacesTable>): WorkspaceSettings {
  return { id: row.id, name: row.name, ...settingValues(row.settings) };
}

/** The settings of a workspace, as they apply now. */
export async function workspaceSettings(db: Executor, workspaceId: number): Promise<WorkspaceSettings> {
  const row = await findWorkspace(db, workspaceId);
  if (!row) throw errors.notFound('workspace');
  return settingsResource(row);
}

/** `GET /v1/workspace`: the Workspace, its settings and the `ai` setting (its key never shown). */
export async function workspaceSettingsResource(db: Executor, workspaceId: number): Promise<Static<typeof WorkspaceSettingsResource>> {
  const row = await findWorkspace(db, workspaceId);
  if (!row) throw errors.notFound('workspace');
  return apiResource(row, await aiSettings(db, workspaceId));
}

/** The Workspace with its settings, as `/v1/workspace` answers. */
function apiResource(row: Selectable<WorkspacesTable>, ai: AiSettingsResource): Static<typeof WorkspaceSettingsResource> {
  const { id, name, ...settings } = settingsResource(row);
  return { id, name, appId: row.app_id, createdAt: row.created_at.toISOString(), ...settings, ai };
}

/**
 * `PATCH /v1/workspace`: only the fields given change; the others keep their value. Audited
 * with the change. `sso` is replaced whole (its client secret kept when left out, sealed in a
 * column of its own when given, dropped with `sso: null`); `ai` keeps its own row and a sealed key.
 */
export async function changeWorkspaceSettings(
  deps: { db: Db; secretKey: Buffer; config: { allowPrivateSso: boolean; allowPrivateAi: boolean }; now: () => Date },
  workspaceId: number,
  patch: Static<typeof WorkspaceSettingsPatch>,
  trail: Trail,
): Promise<Static<typeof WorkspaceSettingsResource>> {
  const { name, sso, ai, ...rest } = patch;
  const settings: Record<string, unknown> = rest;
  if (rest.businessHours) settings.businessHours = checkBusinessHours(rest.businessHours);
  return deps.db.transaction().execute(async (trx) => {
    const before = await findWorkspace(trx, workspaceId);
    if (!before) throw errors.notFound('workspace');
    // What the audit entry shows of `sso`: the secret only as "[set]".
    let shownSso: unknown;
    if (sso !== undefined) {
      const clientSecret = sso?.clientSecret;
      const value =
        sso && checkSsoSetting(sso, { allowPrivate: deps.config.allowPrivateSso, secretStored: before.sso_client_secret !== null });
      settings.sso = value;
      shownSso = value && { ...value, ...(clientSecret !== undefined ? { clientSecret: SECRET } : {}) };
      if (sso === null) await setSsoClientSecret(trx, workspaceId, null);
      else if (clientSecret !== undefined)
        await setSsoClientSecret(trx, workspaceId, seal(deps.secretKey, clientSecret, ssoSecretAad(workspaceId)));
    }
    const row = await updateWorkspaceSettings(trx, workspaceId, { name, settings });
    if (!row) throw errors.notFound('workspace');
    const { ai: _ai, ...shown } = patch;
    const changes = changesOf(settingsResource(before), { ...shown, ...(sso !== undefined ? { sso: shownSso } : {}) });
    let aiNow: AiSettingsResource;
    if (ai) {
      const changed = await changeAiSettings(
        trx,
        { secretKey: deps.secretKey, allowPrivate: deps.config.allowPrivateAi, now: deps.now() },
        workspaceId,
        ai,
      );
      Object.assign(changes, changesOf({ ai: changed.before }, { ai: changed.after }));
      aiNow = changed.setting;
    } else aiNow = await aiSettings(trx, workspaceId);
    await recordAudit(trx, trail, 'workspace.settings_changed', { type: 'workspace', id: workspaceId }, changes);
    // Switched, it changes which threads every agent sees: every client re-reads (docs/teams.md).
    if ('restrictAgentsToTeams' in changes) await publishSightChanged(trx, workspaceId, 'everyone');
    return apiResource(row, aiNow);
  });
}
