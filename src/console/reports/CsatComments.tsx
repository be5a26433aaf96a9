import { useEffect, useRef, useState } from 'preact/hooks';
import type { CsatResponse } from '../../../packages/client/src/index';
import { contactName, contacts, wantContacts } from '../inbox/contacts';
import { Failure } from '../settings/Failure';
import { errorText } from '../shared/api';
import { onLinkClick } from '../shared/router';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import type { Period } from './period';

/** Ratings read per page: a Monday's glance, more on request. */
const PAGE = 10;

const timeFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/**
 * The ratings contacts gave in the period, newest first, each with its comment, its contact and
 * a link to the conversation (`GET /v1/csat-responses`, one cursor page at a time).
 */
export function CsatComments({ period, caption }: { period: Period; caption: string }) {
  const s = useStore(session)!;
  const known = useStore(contacts);
  const [items, setItems] = useState<CsatResponse[] | null>(null);
  const [next, setNext] = useState<string | undefined>(undefined);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(false);
  // The period's key when a read started: a read of a period left meanwhile lands nowhere.
  const current = useRef('');
  const key = `${period.from}/${period.to}/${period.timezone}`;
  current.current = key;

  async function load(cursor: string | undefined) {
    setLoading(true);
    try {
      const page = await s.client.reports.csatResponses({ ...period, limit: PAGE, ...(cursor ? { cursor } : {}) });
      if (current.current !== key) return;
      wantContacts(page.data.map((r) => r.contactId));
      setItems((before) => (cursor ? [...(before ?? []), ...page.data] : page.data));
      setNext(page.meta.nextCursor);
      setError(null);
    } catch (err) {
      setError(errorText(err));
    } finally {
      setLoading(false);
    }
  }

  useEffect(() => {
    setItems(null);
    setNext(undefined);
    void load(undefined);
  }, [key]);

  return (
    <section class="report-panel" aria-labelledby="csat-comments-title">
      <div class="report-panel-head">
        <h2 id="csat-comments-title">CSAT comments</h2>
      </div>
      <p class="reports-range">{caption}, newest first.</p>
      <Failure error={error} />
      {items && items.length === 0 && <p class="empty">No ratings in this period.</p>}
      <ul class="csat-comments" aria-label="CSAT ratings" aria-busy={items === null || loading}>
        {(items ?? []).map((r) => (
          <li key={r.conversationId} class="csat-comment">
            <p class={`csat-rating rating-${r.rating}`}>
              <span aria-hidden="true">{'★'.repeat(r.rating) + '☆'.repeat(5 - r.rating)}</span>
              <span class="sr-only">Rating </span> {r.rating} of 5
            </p>
            {r.comment ? <blockquote class="csat-text">{r.comment}</blockquote> : <p class="csat-text none">No comment</p>}
            <p class="csat-meta">
              {contactName(known.get(r.contactId), r.contactId)}, <time dateTime={r.ratedAt}>{timeFormat.format(new Date(r.ratedAt))}</time>{' '}
              ·{' '}
              <a href={`/app/c/${r.threadId}`} onClick={(e) => onLinkClick(e, `/c/${r.threadId}`)}>
                Open the conversation
                <span class="sr-only"> with {contactName(known.get(r.contactId), r.contactId)}</span>
              </a>
            </p>
          </li>
        ))}
      </ul>
      {next && (
        <button type="button" class="csat-more" disabled={loading} onClick={() => void load(next)}>
          {loading ? 'Loading…' : 'Show more ratings'}
        </button>
      )}
    </section>
  );
}
