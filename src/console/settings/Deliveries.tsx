import { useEffect } from 'preact/hooks';
import type { WebhookDelivery, WebhookEndpoint } from '../../../packages/client/src/index';
import { fullTime } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, useLoad } from '../shared/use-load';
import { Failure } from './Failure';

const lastOf = (d: WebhookDelivery) => d.attempts[d.attempts.length - 1];

/** One endpoint's delivery log (newest first, one page), refreshed every few seconds while open. */
export function Deliveries({ endpoint }: { endpoint: WebhookEndpoint }) {
  const s = useStore(session)!;
  const { data, error, reload, setError } = useLoad(
    async () => (await s.client.page<WebhookDelivery>(`/v1/webhook-endpoints/${endpoint.id}/deliveries`, { limit: 50 })).data,
    [endpoint.id],
  );
  // Deliveries change as the dispatcher works; the socket does not announce them.
  useEffect(() => {
    const timer = setInterval(() => void reload(), 3_000);
    return () => clearInterval(timer);
  }, [reload]);

  return (
    <div class="deliveries">
      <Failure error={error} />
      <div class="row-actions">
        <button type="button" onClick={() => void reload()}>
          Refresh deliveries
        </button>
      </div>
      {data && data.length === 0 && <p class="empty">No deliveries yet.</p>}
      {data && data.length > 0 && (
        // A region of its own, focusable, so a keyboard can scroll it when it is wider than the screen.
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region takes focus so a keyboard can scroll it (axe: scrollable-region-focusable)
        <section class="table-scroll" aria-label={`Deliveries to ${endpoint.url}`} tabIndex={0}>
          <table class="settings-table">
            <caption>Deliveries to {endpoint.url}</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Created</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.map((d) => {
                const last = lastOf(d);
                return (
                  <tr key={d.id} data-delivery-id={d.id}>
                    <td>{d.eventType}</td>
                    <td>{d.status}</td>
                    <td>{d.attempts.length}</td>
                    <td class="wrap">{last ? (last.statusCode ?? last.error ?? '—') : '—'}</td>
                    <td>{fullTime(d.createdAt)}</td>
                    <td>
                      <button
                        type="button"
                        aria-label={`Redeliver ${d.eventType} delivery ${d.id}`}
                        onClick={() => void attempt(() => s.client.redeliver(d.id), setError).then(reload)}
                      >
                        Redeliver
                      </button>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </section>
      )}
    </div>
  );
}
