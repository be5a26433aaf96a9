import { useState } from 'preact/hooks';
import type { Connection, ThreadPriority } from '../../../packages/client/src/index';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, collect, useLoad } from '../shared/use-load';
import { Failure, FormError } from './Failure';

const EXAMPLE_HOURS = {
  timezone: 'Europe/Berlin',
  weekly: {
    mon: [['09:00', '17:00']],
    tue: [['09:00', '17:00']],
    wed: [['09:00', '17:00']],
    thu: [['09:00', '17:00']],
    fri: [['09:00', '17:00']],
    sat: [],
    sun: [],
  },
  holidays: [],
};

/** Business hours, away messages and SLA policies (docs/sla.md). */
export function Sla() {
  const s = useStore(session)!;
  const workspace = useLoad(() => s.client.workspace());
  const policies = useLoad(() => s.client.slaPolicies());
  const connections = useLoad(() => collect(s.client.connections({ limit: 100 })));
  const [hours, setHours] = useState<string | null>(null);
  const [name, setName] = useState('');
  const [priority, setPriority] = useState<'' | ThreadPriority>('');
  const [firstResponse, setFirstResponse] = useState('PT1H');
  const [nextResponse, setNextResponse] = useState('');
  const [resolution, setResolution] = useState('');
  const [businessHoursOnly, setBusinessHoursOnly] = useState(false);
  const error = workspace.error ?? policies.error ?? connections.error;
  const setError = policies.setError;
  // A refusal shows beside the form that caused it: the policy form sits far below the top.
  const [hoursError, setHoursError] = useState<string | null>(null);
  const [policyError, setPolicyError] = useState<string | null>(null);

  const shownHours = hours ?? (workspace.data?.businessHours ? JSON.stringify(workspace.data.businessHours, null, 2) : '');

  async function saveHours(e: Event) {
    e.preventDefault();
    let businessHours = null;
    try {
      businessHours = shownHours.trim() === '' ? null : JSON.parse(shownHours);
    } catch {
      setHoursError('Business hours: not valid JSON');
      return;
    }
    if (await attempt(() => s.client.updateWorkspace({ businessHours }), setHoursError)) {
      setHours(null);
      await workspace.reload();
    }
  }

  async function create(e: Event) {
    e.preventDefault();
    const body = {
      name,
      firstResponse: firstResponse || null,
      nextResponse: nextResponse || null,
      resolution: resolution || null,
      businessHoursOnly,
      conditions: priority ? { priorities: [priority] } : {},
    };
    if (await attempt(() => s.client.createSlaPolicy(body), setPolicyError)) {
      setName('');
      await policies.reload();
    }
  }

  return (
    <>
      <Failure error={error} />
      <form class="settings-form" onSubmit={saveHours} aria-labelledby="hours-title">
        <h3 id="hours-title">Business hours</h3>
        <label>
          Business hours (JSON; empty = always open)
          <textarea
            rows={8}
            value={shownHours}
            placeholder={JSON.stringify(EXAMPLE_HOURS)}
            onInput={(e) => setHours(e.currentTarget.value)}
          />
        </label>
        <FormError error={hoursError} />
        <button type="submit" class="primary">
          Save business hours
        </button>
      </form>

      <h3>Away messages</h3>
      <ul class="settings-list" aria-label="Away messages">
        {(connections.data ?? []).map((c) => (
          <AwayMessage key={c.id} connection={c} onSaved={connections.reload} />
        ))}
      </ul>

      <form class="settings-form" onSubmit={create} aria-labelledby="policy-new">
        <h3 id="policy-new">New SLA policy</h3>
        <label>
          Name
          <input required maxLength={100} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        </label>
        <label>
          Priority
          <select value={priority} onChange={(e) => setPriority(e.currentTarget.value as '' | ThreadPriority)}>
            <option value="">Any priority</option>
            <option value="low">low</option>
            <option value="normal">normal</option>
            <option value="high">high</option>
            <option value="urgent">urgent</option>
          </select>
        </label>
        <label>
          First response (ISO 8601, e.g. PT1H)
          <input value={firstResponse} onInput={(e) => setFirstResponse(e.currentTarget.value)} />
        </label>
        <label>
          Next response
          <input value={nextResponse} onInput={(e) => setNextResponse(e.currentTarget.value)} />
        </label>
        <label>
          Resolution
          <input value={resolution} onInput={(e) => setResolution(e.currentTarget.value)} />
        </label>
        <label>
          <input type="checkbox" checked={businessHoursOnly} onChange={(e) => setBusinessHoursOnly(e.currentTarget.checked)} /> Only in
          business hours
        </label>
        <FormError error={policyError} />
        <button type="submit" class="primary">
          Add SLA policy
        </button>
      </form>
      {policies.data && policies.data.length === 0 && <p class="empty">No SLA policies yet.</p>}
      <ul class="settings-list" aria-label="SLA policies">
        {(policies.data ?? []).map((p) => (
          <li key={p.id}>
            <strong>{p.name}</strong> ({p.enabled ? 'enabled' : 'disabled'}, position {p.position}):{' '}
            {[
              p.firstResponse && `first response ${p.firstResponse}`,
              p.nextResponse && `next response ${p.nextResponse}`,
              p.resolution && `resolution ${p.resolution}`,
            ]
              .filter(Boolean)
              .join(', ')}
            {p.businessHoursOnly ? ', in business hours' : ''}
            {p.conditions.priorities ? `; priority ${p.conditions.priorities.join(' or ')}` : ''}
            <div class="row-actions">
              <button
                type="button"
                onClick={async () => {
                  if (await attempt(() => s.client.updateSlaPolicy(p.id, { enabled: !p.enabled }), setError)) await policies.reload();
                }}
              >
                {p.enabled ? 'Disable' : 'Enable'} {p.name}
              </button>
              <button
                type="button"
                onClick={async () => {
                  if (await attempt(() => s.client.deleteSlaPolicy(p.id), setError)) await policies.reload();
                }}
              >
                Delete {p.name}
              </button>
            </div>
          </li>
        ))}
      </ul>
    </>
  );
}

function AwayMessage({ connection, onSaved }: { connection: Connection; onSaved: () => Promise<void> }) {
  const s = useStore(session)!;
  const [text, setText] = useState(connection.awayMessage ?? '');
  const [error, setError] = useState<string | null>(null);
  async function save(e: Event) {
    e.preventDefault();
    const awayMessage = text.trim() === '' ? null : text;
    if (await attempt(() => s.client.updateConnection(connection.id, { awayMessage }), setError)) await onSaved();
  }
  return (
    <li>
      <form class="settings-form" onSubmit={save} aria-label={`Away message of ${connection.name}`}>
        <label>
          Away message of {connection.name} (empty = off)
          <textarea rows={2} maxLength={4096} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        </label>
        <FormError error={error} />
        <button type="submit">Save away message</button>
      </form>
    </li>
  );
}
