import { useState } from 'preact/hooks';
import type { SignatureScheme, WebhookEndpoint, WebhookEventFilter } from '../../../packages/client/src/index';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, collect, useLoad } from '../shared/use-load';
import { Deliveries } from './Deliveries';
import { Failure } from './Failure';
import { WEBHOOK_EVENTS } from './webhook-events';

/**
 * Outbound webhook endpoints: create (the signing secret is shown once, then never again),
 * enable or disable, delete, and each one's delivery log with redeliver.
 */
export function Webhooks() {
  const s = useStore(session)!;
  const { data, error, reload, setError } = useLoad(() => collect(s.client.webhookEndpoints({ limit: 100 })));
  const [form, setForm] = useState({
    url: '',
    description: '',
    events: ['*'] as WebhookEventFilter[],
    scheme: 'service' as SignatureScheme,
  });
  const [secret, setSecret] = useState<string | null>(null);
  const [open, setOpen] = useState<number | null>(null);

  async function create(e: Event) {
    e.preventDefault();
    const body = { url: form.url, description: form.description, events: form.events, signatureScheme: form.scheme };
    await attempt(async () => {
      const made = await s.client.createWebhookEndpoint(body);
      setSecret(made.secret);
      setOpen(made.id);
      setForm({ ...form, url: '', description: '' });
    }, setError);
    await reload();
  }

  const toggle = (ep: WebhookEndpoint) =>
    void attempt(() => s.client.updateWebhookEndpoint(ep.id, { enabled: !ep.enabled }), setError).then(reload);

  return (
    <>
      <Failure error={error} />
      <form class="settings-form" onSubmit={create} aria-labelledby="endpoint-new">
        <h3 id="endpoint-new">New endpoint</h3>
        <label>
          URL
          <input type="url" required value={form.url} onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} />
        </label>
        <label>
          Description
          <input value={form.description} maxLength={500} onInput={(e) => setForm({ ...form, description: e.currentTarget.value })} />
        </label>
        <fieldset>
          <legend>Events</legend>
          {WEBHOOK_EVENTS.map((ev) => (
            <label key={ev} class="check">
              <input
                type="checkbox"
                checked={form.events.includes(ev)}
                onChange={(e) => {
                  const on = e.currentTarget.checked;
                  const rest = form.events.filter((x) => x !== ev && (ev === '*' ? false : x !== '*'));
                  setForm({ ...form, events: on ? [...rest, ev] : rest });
                }}
              />
              {ev === '*' ? 'Every event' : ev}
            </label>
          ))}
        </fieldset>
        <label>
          Signature scheme
          <select value={form.scheme} onChange={(e) => setForm({ ...form, scheme: e.currentTarget.value as SignatureScheme })}>
            <option value="service">service (x-service-signature)</option>
            <option value="standard">Standard Webhooks</option>
          </select>
        </label>
        <button type="submit" class="primary" disabled={form.events.length === 0}>
          Add endpoint
        </button>
      </form>
      {secret && (
        <div class="notice" role="status">
          <p>
            Signing secret, shown this once: <code class="secret">{secret}</code>
          </p>
          <button type="button" onClick={() => setSecret(null)}>
            I have stored it
          </button>
        </div>
      )}
      {data && data.length === 0 && <p class="empty">No endpoints yet.</p>}
      <ul class="settings-list" aria-label="Endpoints">
        {(data ?? []).map((ep) => (
          <li key={ep.id} class="endpoint">
            <div>
              <strong>{ep.url}</strong>
              <p class="muted">
                {ep.enabled ? 'Enabled' : `Disabled${ep.disabledReason ? `: ${ep.disabledReason}` : ''}`} · {ep.events.join(', ')} ·{' '}
                {ep.signatureScheme}
                {ep.description ? ` · ${ep.description}` : ''}
              </p>
            </div>
            <div class="row-actions">
              <button type="button" aria-expanded={open === ep.id} onClick={() => setOpen(open === ep.id ? null : ep.id)}>
                {open === ep.id ? 'Hide deliveries' : 'Deliveries'}
              </button>
              <button type="button" onClick={() => void attempt(() => s.client.testWebhookEndpoint(ep.id), setError)}>
                Send test
              </button>
              <button type="button" onClick={() => toggle(ep)}>
                {ep.enabled ? 'Disable' : 'Enable'}
              </button>
              <button
                type="button"
                onClick={() => {
                  if (confirm(`Delete the endpoint ${ep.url}?`))
                    void attempt(() => s.client.deleteWebhookEndpoint(ep.id), setError).then(reload);
                }}
              >
                Delete
              </button>
            </div>
            {open === ep.id && <Deliveries endpoint={ep} />}
          </li>
        ))}
      </ul>
    </>
  );
}
