import { useState } from 'preact/hooks';
import type { Connection, ConnectionCredentials, ConnectionPatch } from '../../client/client';
import { channelName } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, collect, useLoad } from '../shared/use-load';
import { Failure } from './Failure';

/** Integrations a workspace admin connects, with the credential fields each takes (docs/connections.md). */
const INTEGRATIONS: [key: string, fields: (keyof ConnectionCredentials)[]][] = [
  ['whatsapp', ['accessToken']],
  ['whatsapp_session.waha', ['accessToken']],
  ['social_one.native', ['accessToken']],
  ['social_two.native', ['accessToken']],
  ['telegram', ['accessToken']],
  ['sms.twilio', ['accountSid', 'accessToken']],
  ['email.postmark', ['smtpUrl']],
  ['email.mailgun', ['smtpUrl']],
  ['livechat', []],
];
const FIELD_NAMES: Record<keyof ConnectionCredentials, string> = {
  accessToken: 'Access token',
  accountSid: 'Account SID',
  smtpUrl: 'SMTP URL',
};
const fieldsOf = (key: string) => INTEGRATIONS.find(([k]) => k === key)?.[1] ?? ['accessToken'];

/** Only the fields that were typed: an empty field means "keep what is stored". */
function typed(values: Partial<Record<keyof ConnectionCredentials, string>>): ConnectionCredentials | undefined {
  const entries = Object.entries(values).filter(([, v]) => v && v.trim() !== '');
  return entries.length === 0 ? undefined : (Object.fromEntries(entries) as ConnectionCredentials);
}

/**
 * Write-only inputs: a stored credential is never shown (the API never returns it); typing
 * into these replaces the whole set.
 */
function CredentialFields({
  integrationKey,
  values,
  onInput,
  replace,
}: {
  integrationKey: string;
  values: Partial<Record<keyof ConnectionCredentials, string>>;
  onInput(v: Partial<Record<keyof ConnectionCredentials, string>>): void;
  replace: boolean;
}) {
  return (
    <>
      {fieldsOf(integrationKey).map((f) => (
        <label key={f}>
          {replace ? `Replace ${FIELD_NAMES[f].toLowerCase()}` : FIELD_NAMES[f]}
          <input
            type="password"
            autocomplete="off"
            value={values[f] ?? ''}
            placeholder={replace ? 'leave empty to keep' : ''}
            onInput={(e) => onInput({ ...values, [f]: e.currentTarget.value })}
          />
        </label>
      ))}
    </>
  );
}

function EditConnection({ c, onDone }: { c: Connection; onDone(changed: boolean): void }) {
  const s = useStore(session)!;
  const [name, setName] = useState(c.name);
  const [autoAssign, setAutoAssign] = useState(c.autoAssign);
  const [creds, setCreds] = useState<Partial<Record<keyof ConnectionCredentials, string>>>({});
  const [clear, setClear] = useState(false);
  const [error, setError] = useState<string | null>(null);

  async function save(e: Event) {
    e.preventDefault();
    const patch: ConnectionPatch = {};
    if (name !== c.name) patch.name = name;
    if (autoAssign !== c.autoAssign) patch.autoAssign = autoAssign;
    const replaced = typed(creds);
    if (clear) patch.credentials = null;
    else if (replaced) patch.credentials = replaced;
    if (Object.keys(patch).length === 0) return onDone(false);
    if (await attempt(() => s.client.updateConnection(c.id, patch), setError)) onDone(true);
  }

  return (
    <form class="settings-form" onSubmit={save} aria-label={`Edit ${c.name}`}>
      <Failure error={error} />
      <label>
        Name
        <input required value={name} maxLength={200} onInput={(e) => setName(e.currentTarget.value)} />
      </label>
      <label class="check">
        <input type="checkbox" checked={autoAssign} onChange={(e) => setAutoAssign(e.currentTarget.checked)} />
        Assign new conversations automatically
      </label>
      {fieldsOf(c.integrationKey).length > 0 && (
        <>
          <p class="muted">Credentials: {c.hasCredentials ? 'set (never shown)' : 'none'}</p>
          <CredentialFields integrationKey={c.integrationKey} values={creds} onInput={setCreds} replace />
          {c.hasCredentials && (
            <label class="check">
              <input type="checkbox" checked={clear} onChange={(e) => setClear(e.currentTarget.checked)} />
              Remove the stored credentials
            </label>
          )}
        </>
      )}
      <div class="row-actions">
        <button type="submit" class="primary">
          Save
        </button>
        <button type="button" onClick={() => onDone(false)}>
          Cancel
        </button>
      </div>
    </form>
  );
}

/** The workspace's channel accounts: list, connect one, rename, auto-assign, replace credentials. */
export function Connections() {
  const s = useStore(session)!;
  const { data, error, reload, setError } = useLoad(() => collect(s.client.connections({ limit: 100 })));
  const [form, setForm] = useState({ integrationKey: 'whatsapp', externalAccountId: '', name: '', autoAssign: false });
  const [creds, setCreds] = useState<Partial<Record<keyof ConnectionCredentials, string>>>({});
  const [editing, setEditing] = useState<number | null>(null);

  async function create(e: Event) {
    e.preventDefault();
    const credentials = typed(creds);
    const body = {
      integrationKey: form.integrationKey,
      name: form.name,
      autoAssign: form.autoAssign,
      ...(form.externalAccountId.trim() ? { externalAccountId: form.externalAccountId.trim() } : {}),
      ...(credentials ? { credentials } : {}),
    };
    if (await attempt(() => s.client.createConnection(body), setError)) {
      setForm({ ...form, externalAccountId: '', name: '' });
      setCreds({});
      await reload();
    }
  }

  return (
    <>
      <Failure error={error} />
      <form class="settings-form" onSubmit={create} aria-labelledby="connection-new">
        <h3 id="connection-new">Connect an account</h3>
        <label>
          Channel
          <select
            value={form.integrationKey}
            onChange={(e) => {
              setForm({ ...form, integrationKey: e.currentTarget.value });
              setCreds({});
            }}
          >
            {INTEGRATIONS.map(([key]) => (
              <option key={key} value={key}>
                {channelName(key)} ({key})
              </option>
            ))}
          </select>
        </label>
        <label>
          Account id{form.integrationKey === 'livechat' ? ' (widget key; empty for a new one)' : ''}
          <input
            required={form.integrationKey !== 'livechat'}
            value={form.externalAccountId}
            maxLength={320}
            onInput={(e) => setForm({ ...form, externalAccountId: e.currentTarget.value })}
          />
        </label>
        <label>
          Name
          <input required value={form.name} maxLength={200} onInput={(e) => setForm({ ...form, name: e.currentTarget.value })} />
        </label>
        <CredentialFields integrationKey={form.integrationKey} values={creds} onInput={setCreds} replace={false} />
        <label class="check">
          <input type="checkbox" checked={form.autoAssign} onChange={(e) => setForm({ ...form, autoAssign: e.currentTarget.checked })} />
          Assign new conversations automatically
        </label>
        <button type="submit" class="primary">
          Connect
        </button>
      </form>
      {data && data.length === 0 && <p class="empty">No connections yet.</p>}
      <ul class="settings-list" aria-label="Connections">
        {(data ?? []).map((c) => (
          <li key={c.id}>
            {editing === c.id ? (
              <EditConnection
                c={c}
                onDone={(changed) => {
                  setEditing(null);
                  if (changed) void reload();
                }}
              />
            ) : (
              <>
                <div>
                  <strong>{c.name}</strong>
                  <p class="muted">
                    {channelName(c.integrationKey)} · {c.externalAccountId} · credentials {c.hasCredentials ? 'set' : 'none'}
                    {c.autoAssign ? ' · auto-assign' : ''}
                  </p>
                </div>
                <div class="row-actions">
                  <button type="button" onClick={() => setEditing(c.id)} aria-label={`Edit ${c.name}`}>
                    Edit
                  </button>
                </div>
              </>
            )}
          </li>
        ))}
      </ul>
    </>
  );
}
