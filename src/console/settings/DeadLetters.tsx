import { useState } from 'preact/hooks';
import { errorText } from '../shared/api';
import { fullTime } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { useLoad } from '../shared/use-load';
import { Failure } from './Failure';

/**
 * Provider deliveries of this workspace that failed every attempt; requeue one once its cause
 * is fixed (a connection added, credentials replaced). One idempotency key per click, so a
 * retried request never queues the row twice.
 */
export function DeadLetters() {
  const s = useStore(session)!;
  const { data, error, reload, setError } = useLoad(() => s.client.deadLetters({ limit: 100 }));
  const [requeued, setRequeued] = useState<string | null>(null);

  async function requeue(id: string) {
    try {
      await s.client.requeueDeadLetter(id, { idempotencyKey: crypto.randomUUID() });
      setRequeued(id);
      setError(null);
      await reload();
    } catch (err) {
      setError(errorText(err));
    }
  }

  return (
    <>
      <Failure error={error} />
      {requeued && <p role="status">Delivery {requeued} is queued again.</p>}
      {data && data.length === 0 && <p class="empty">No dead letters.</p>}
      {data && data.length > 0 && (
        // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region takes focus so a keyboard can scroll it (axe: scrollable-region-focusable)
        <section class="table-scroll" aria-label="Dead letters table" tabIndex={0}>
          <table class="settings-table">
            <caption class="sr-only">Dead letters</caption>
            <thead>
              <tr>
                <th scope="col">Received</th>
                <th scope="col">Channel</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last error</th>
                <th scope="col">
                  <span class="sr-only">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {data.map((row) => (
                <tr key={row.id} data-row-id={row.id}>
                  <td>{fullTime(row.createdAt)}</td>
                  <td>
                    {row.integrationKey}
                    {row.event ? ` · ${row.event}` : ''}
                  </td>
                  <td>{row.attemptCount}</td>
                  <td class="wrap">{row.lastError ?? '—'}</td>
                  <td>
                    <button type="button" onClick={() => void requeue(row.id)} aria-label={`Requeue delivery ${row.id}`}>
                      Requeue
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </section>
      )}
    </>
  );
}
