import type { TeamUser } from '../../../packages/client/src/index';
import { onRealtime, resync } from './realtime';
import { session } from './session';
import { createStore } from './store';

/**
 * The workspace's users, read once per session (`GET /v1/users`, open to agents): the assignee
 * picker offers them, the actions name the assignee, the `@` picker and the status menu read
 * them. `user.updated` keeps each up to date; `reloadTeam` after a settings change, and after
 * a gap of the socket (a colleague added, renamed or gone offline meanwhile sent no event here).
 */
export const team = createStore<readonly TeamUser[] | null>(null);
let loading: Promise<void> | null = null;

export function wantTeam(): void {
  if (team.get() === null) void reloadTeam();
}

export function reloadTeam(): Promise<void> {
  const client = session.get()?.client;
  if (!client) return Promise.resolve();
  loading ??= (async () => {
    const users: TeamUser[] = [];
    for await (const u of client.users({ limit: 100 })) users.push(u);
    team.set(users);
  })()
    .catch(() => undefined)
    .finally(() => {
      loading = null;
    });
  return loading;
}

/** Who may be assigned: active users who answer (agents, admins, or no role; never operators only). */
export const assignable = (u: TeamUser) => u.active && (u.roles.length === 0 || u.roles.includes('agent') || u.roles.includes('admin'));

session.subscribe((s) => {
  if (!s) team.set(null);
});

resync.subscribe(() => {
  if (team.get() !== null) void reloadTeam();
});

onRealtime((event) => {
  if (event.type !== 'user.updated') return;
  const user = event.data;
  team.update((list) => list && (list.some((u) => u.id === user.id) ? list.map((u) => (u.id === user.id ? user : u)) : [...list, user]));
});

/** A user's name as the console shows it, while the team is loading too. */
export const userName = (users: readonly TeamUser[] | null, id: number) => users?.find((u) => u.id === id)?.name ?? `User ${id}`;
