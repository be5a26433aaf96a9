import { useState } from 'preact/hooks';
import type { UserAvailability } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { team } from '../shared/team';

const CHOICES: [UserAvailability, string][] = [
  ['online', 'Online'],
  ['busy', 'Busy'],
  ['offline', 'Offline'],
];

/**
 * The agent's own status (docs/console.md, "Status"): routing gives threads only to `online`
 * agents. Shown from the team list, which `user.updated` keeps live, so a change made in another
 * tab, or the service's own `offline` after the last socket closed, shows here too.
 */
export function StatusMenu() {
  const s = useStore(session)!;
  const users = useStore(team);
  const me = users?.find((u) => u.id === s.user.id);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function choose(availability: UserAvailability) {
    setSaving(true);
    setError(null);
    try {
      const user = await s.client.updateMe({ availability });
      team.update((list) => list?.map((u) => (u.id === user.id ? user : u)) ?? null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setSaving(false);
    }
  }

  const value = me?.availability ?? 'online';
  return (
    <span class="status-menu">
      <span class={`status-dot status-${value}`} aria-hidden="true" />
      <select
        aria-label="Your status"
        value={value}
        disabled={!me || saving}
        title={error ?? undefined}
        aria-invalid={error ? true : undefined}
        onChange={(e) => void choose(e.currentTarget.value as UserAvailability)}
      >
        {CHOICES.map(([v, label]) => (
          <option key={v} value={v}>
            {label}
          </option>
        ))}
      </select>
      {error && (
        <span class="sr-only" role="alert">
          {error}
        </span>
      )}
    </span>
  );
}
