import { useState } from 'preact/hooks';
import type { ReportGroup, ReportGroupBy, ReportMetric, ReportSummary } from '../../../packages/client/src/index';
import { Failure } from '../settings/Failure';
import { errorText } from '../shared/api';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { useLoad } from '../shared/use-load';
import { Chart } from './Chart';
import { CsatComments } from './CsatComments';
import { change, figure } from './format';
import { PERIODS, type PeriodDays, periods } from './period';
import './reports.css';

type Kind = keyof typeof figure;

/** The figures at the top: each with the period before beside it. */
interface Figure {
  title: string;
  kind: Kind;
  value: (g: ReportGroup) => number | null;
  /** Shown green when it fell since the period before (a faster answer, fewer breaches). */
  lowerIsBetter?: boolean;
}
const FIGURES: Figure[] = [
  { title: 'Conversations', kind: 'count', value: (g) => g.conversations },
  { title: 'Resolved', kind: 'count', value: (g) => g.resolved },
  { title: 'First response (median)', kind: 'seconds', value: (g) => g.firstResponseSeconds.median, lowerIsBetter: true },
  { title: 'Resolution (median)', kind: 'seconds', value: (g) => g.resolutionSeconds.median, lowerIsBetter: true },
  { title: 'Messages in', kind: 'count', value: (g) => g.messagesIn },
  { title: 'Messages out', kind: 'count', value: (g) => g.messagesOut },
  { title: 'SLA breaches', kind: 'count', value: (g) => g.slaBreaches, lowerIsBetter: true },
];
const CSAT_FIGURE: Figure = { title: 'CSAT (average)', kind: 'rating', value: (g) => g.csat.average };

const METRICS: { metric: ReportMetric; title: string; kind: Kind }[] = [
  { metric: 'conversations', title: 'Conversations', kind: 'count' },
  { metric: 'resolved', title: 'Resolved', kind: 'count' },
  { metric: 'firstResponseMedian', title: 'First response (median)', kind: 'seconds' },
  { metric: 'resolutionMedian', title: 'Resolution (median)', kind: 'seconds' },
  { metric: 'messagesIn', title: 'Messages in', kind: 'count' },
  { metric: 'csatAverage', title: 'CSAT (average)', kind: 'rating' },
];

const GROUPS: { groupBy: Exclude<ReportGroupBy, 'none'>; title: string; column: string; none: string }[] = [
  { groupBy: 'agent', title: 'Agent', column: 'Agent', none: 'Unassigned' },
  { groupBy: 'team', title: 'Team', column: 'Team', none: 'No team' },
  { groupBy: 'connection', title: 'Channel', column: 'Channel', none: 'Unknown' },
  { groupBy: 'label', title: 'Label', column: 'Label', none: 'No label' },
];

const dayFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' });
const dayOf = (date: string) => dayFormat.format(new Date(`${date}T12:00:00`));

/** The Reports page (admins; docs/console.md, "Reports"). */
export function Reports() {
  const s = useStore(session)!;
  const [days, setDays] = useState<PeriodDays>(30);
  const [metric, setMetric] = useState<ReportMetric>('conversations');
  const [groupBy, setGroupBy] = useState<Exclude<ReportGroupBy, 'none'>>('agent');
  const [download, setDownload] = useState<string | null>(null);
  const { current, previous } = periods(days);
  const key = `${current.from}/${current.to}/${current.timezone}`;

  const totals = useLoad(
    () => Promise.all([s.client.reports.summary(current), s.client.reports.summary(previous)]).then(([now, before]) => ({ now, before })),
    [key],
  );
  const series = useLoad(() => s.client.reports.timeseries({ ...current, metric, interval: 'day' }), [key, metric]);
  const groups = useLoad(() => s.client.reports.summary({ ...current, groupBy }), [key, groupBy]);
  const error = totals.error ?? series.error ?? groups.error;

  async function downloadCsv() {
    const token = session.get()?.token;
    setDownload('Preparing the CSV…');
    try {
      // The route needs the credential, which a plain link cannot send: fetched, then saved from a blob.
      const res = await fetch(s.client.reports.csvUrl(current), { headers: token ? { authorization: `Bearer ${token}` } : {} });
      if (!res.ok) throw new Error(`The CSV could not be made (HTTP ${res.status}).`);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = `conversations-${current.from}-to-${current.to}.csv`;
      document.body.append(a);
      a.click();
      a.remove();
      setTimeout(() => URL.revokeObjectURL(url), 60_000);
      setDownload('The CSV is downloaded.');
    } catch (err) {
      setDownload(errorText(err));
    }
  }

  const now = totals.data?.now.groups[0];
  const before = totals.data?.before.groups[0];
  const shown = now && (now.csat.responses > 0 || (before?.csat.responses ?? 0) > 0) ? [...FIGURES, CSAT_FIGURE] : FIGURES;
  const chosen = METRICS.find((m) => m.metric === metric)!;
  const grouping = GROUPS.find((g) => g.groupBy === groupBy)!;
  const periodText = `${dayOf(current.from)} – ${dayOf(current.to)}`;

  return (
    <section class="reports" aria-labelledby="reports-title">
      <div class="reports-head">
        <h1 id="reports-title">Reports</h1>
        <div class="reports-period">
          <label for="report-period">Period</label>
          <select id="report-period" value={days} onChange={(e) => setDays(Number(e.currentTarget.value) as PeriodDays)}>
            {PERIODS.map((d) => (
              <option key={d} value={d}>
                Last {d} days
              </option>
            ))}
          </select>
        </div>
        <button type="button" onClick={() => void downloadCsv()}>
          Download CSV
        </button>
      </div>
      <p class="reports-range">
        {periodText}, times in {current.timezone}; compared with {dayOf(previous.from)} – {dayOf(previous.to)}.
      </p>
      <p class="sr-only" role="status">
        {download ?? ''}
      </p>
      <Failure error={error} />

      <ul class="report-figures" aria-label="Figures" aria-busy={!totals.data}>
        {shown.map((f) => {
          const value = now ? f.value(now) : null;
          const old = before ? f.value(before) : null;
          const delta = change(value, old);
          const better = delta && value !== null && old !== null && value !== old ? value < old === Boolean(f.lowerIsBetter) : null;
          return (
            <li key={f.title} class="report-figure">
              <h2>{f.title}</h2>
              <p class="figure-value">{now ? figure[f.kind](value) : '…'}</p>
              <p class="figure-before">
                Before: {before ? figure[f.kind](old) : '…'}
                {delta && <span class={better ? 'better' : 'worse'}> ({delta})</span>}
              </p>
            </li>
          );
        })}
      </ul>

      <section class="report-panel" aria-labelledby="chart-title">
        <div class="report-panel-head">
          <h2 id="chart-title">{chosen.title} per day</h2>
          <div class="reports-period">
            <label for="report-metric">Figure</label>
            <select id="report-metric" value={metric} onChange={(e) => setMetric(e.currentTarget.value as ReportMetric)}>
              {METRICS.map((m) => (
                <option key={m.metric} value={m.metric}>
                  {m.title}
                </option>
              ))}
            </select>
          </div>
        </div>
        {series.data && <Chart points={series.data} label={chosen.title} format={figure[chosen.kind]} />}
        <details class="report-chart-table">
          <summary>The chart as a table</summary>
          {/* biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region takes focus so a keyboard can scroll it (axe: scrollable-region-focusable) */}
          <section class="table-scroll" aria-label={`${chosen.title} per day`} tabIndex={0}>
            <table class="report-table">
              <caption>
                {chosen.title} per day, {periodText}
              </caption>
              <thead>
                <tr>
                  <th scope="col">Day</th>
                  <th scope="col">{chosen.title}</th>
                </tr>
              </thead>
              <tbody>
                {(series.data ?? []).map((p) => (
                  <tr key={p.start}>
                    <th scope="row">{dayOf(p.start.slice(0, 10))}</th>
                    <td>{figure[chosen.kind](p.value)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </section>
        </details>
      </section>

      <section class="report-panel" aria-labelledby="groups-title">
        <div class="report-panel-head">
          <h2 id="groups-title">By {grouping.title.toLowerCase()}</h2>
          <fieldset class="report-tabs">
            <legend class="sr-only">Group by</legend>
            {GROUPS.map((g) => (
              <button key={g.groupBy} type="button" aria-pressed={g.groupBy === groupBy} onClick={() => setGroupBy(g.groupBy)}>
                {g.title}
              </button>
            ))}
          </fieldset>
        </div>
        <GroupTable
          summary={groups.data}
          column={grouping.column}
          none={grouping.none}
          caption={`By ${grouping.title.toLowerCase()}, ${periodText}`}
        />
      </section>

      <CsatComments period={current} caption={`Ratings received ${periodText}`} />
    </section>
  );
}

function GroupTable({ summary, column, none, caption }: { summary: ReportSummary | null; column: string; none: string; caption: string }) {
  const rows = summary?.groups ?? [];
  const csat = rows.some((g) => g.csat.responses > 0);
  return (
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrollable region takes focus so a keyboard can scroll it (axe: scrollable-region-focusable)
    <section class="table-scroll" aria-label={caption} tabIndex={0}>
      <table class="report-table" aria-busy={!summary}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{column}</th>
            <th scope="col" class="num">
              Conversations
            </th>
            <th scope="col" class="num">
              Resolved
            </th>
            <th scope="col" class="num">
              First response (median)
            </th>
            <th scope="col" class="num">
              Resolution (median)
            </th>
            <th scope="col" class="num">
              Messages in
            </th>
            <th scope="col" class="num">
              Messages out
            </th>
            <th scope="col" class="num">
              SLA breaches
            </th>
            {csat && (
              <th scope="col" class="num">
                CSAT
              </th>
            )}
          </tr>
        </thead>
        <tbody>
          {rows.map((g) => (
            <tr key={String(g.group?.id)}>
              <th scope="row">{g.group?.name ?? (g.group?.id === null || g.group === null ? none : `#${g.group.id}`)}</th>
              <td class="num">{figure.count(g.conversations)}</td>
              <td class="num">{figure.count(g.resolved)}</td>
              <td class="num">{figure.seconds(g.firstResponseSeconds.median)}</td>
              <td class="num">{figure.seconds(g.resolutionSeconds.median)}</td>
              <td class="num">{figure.count(g.messagesIn)}</td>
              <td class="num">{figure.count(g.messagesOut)}</td>
              <td class="num">{figure.count(g.slaBreaches)}</td>
              {csat && <td class="num">{figure.rating(g.csat.average)}</td>}
            </tr>
          ))}
          {summary && rows.length === 0 && (
            <tr>
              <td colSpan={csat ? 9 : 8} class="empty">
                No conversations in this period.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}
