import type { Selectable } from 'kysely';
import { type Static, Type } from 'typebox';
import type { UsersTable } from '../db/types.js';
import { StringEnum, Timestamp } from '../http/schemas.js';

/** A user's own status: routing gives threads only to `online` users (docs/teams.md). */
export const USER_AVAILABILITY = ['online', 'busy', 'offline'] as const;

/** Roles a user may hold: `admin` (workspace admin) and `operator` (platform staff). */
export const USER_ROLES = ['admin', 'operator', 'agent'] as const;

/** docs/api.md UserResource. */
export const UserResource = Type.Object(
  { id: Type.Integer(), name: Type.String(), email: Type.String(), workspaces_id: Type.Integer(), roles: Type.Array(Type.String()) },
  { title: 'UserResource' },
);

/** UserResource of docs/api.md: snake_case `workspaces_id` as the contract names it. */
export function userResource(row: Selectable<UsersTable>): Static<typeof UserResource> {
  return { id: row.id, name: row.name, email: row.email, workspaces_id: row.workspace_id, roles: row.roles };
}

/** What a user has e-mailed while none of their sockets is open; each defaults to true. */
export const NotifyEmail = Type.Object(
  {
    assigned: Type.Boolean({ description: 'someone else or routing assigned you a thread' }),
    mentioned: Type.Boolean({ description: 'a note names you' }),
    sla: Type.Boolean({ description: 'a target of your thread is near or past (sla_warning, sla_breached)' }),
  },
  { title: 'NotifyEmail' },
);

/** A member of the team as `/v1/users` shows it: never the password hash. */
export const TeamUserResource = Type.Object(
  {
    id: Type.Integer(),
    name: Type.String(),
    email: Type.String(),
    roles: Type.Array(StringEnum(USER_ROLES)),
    active: Type.Boolean({ description: 'false: deactivated, cannot sign in' }),
    invited: Type.Boolean({ description: 'invited by e-mail and not signed up yet: inactive until they choose a password' }),
    inviteExpiresAt: Type.Union([Timestamp, Type.Null()], {
      description:
        'an invited user’s link stops working then (7 days after it was mailed; inviting again mails a new one); null for anyone else',
    }),
    availability: StringEnum(USER_AVAILABILITY, {
      description:
        'the user’s status; routing gives threads only to `online` users; set `offline` 2 minutes after their last socket closes',
    }),
    maxOpenThreads: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
      description: 'open assigned threads routing stops at; null = no cap',
    }),
    connected: Type.Boolean({ description: 'one of the user’s realtime sockets is open, on any api process' }),
    notify: Type.Optional(
      Type.Object(
        { email: NotifyEmail },
        {
          description:
            'only on your own user: which notifications are e-mailed to you while you have no socket open, at most one mail per 5 minutes',
        },
      ),
    ),
    createdAt: Timestamp,
  },
  { title: 'User' },
);
export type TeamUser = Static<typeof TeamUserResource>;

/**
 * The User; `self` (the caller is this user) adds their own notification settings, which
 * nobody else sees (not the team list, not `user.updated`).
 */
export function teamUserResource(
  row: Selectable<UsersTable> & { connected: boolean; invited: boolean; invite_expires_at: Date | null },
  self = false,
): TeamUser {
  return {
    id: row.id,
    name: row.name,
    email: row.email,
    roles: row.roles.filter((r): r is (typeof USER_ROLES)[number] => (USER_ROLES as readonly string[]).includes(r)),
    active: row.active,
    invited: row.invited,
    inviteExpiresAt: row.invited && row.invite_expires_at ? new Date(row.invite_expires_at).toISOString() : null,
    availability: row.availability,
    maxOpenThreads: row.max_open_threads,
    connected: row.connected,
    ...(self
      ? {
          notify: {
            email: { assigned: row.notify_email_assigned, mentioned: row.notify_email_mentioned, sla: row.notify_email_sla },
          },
        }
      : {}),
    createdAt: row.created_at.toISOString(),
  };
}
