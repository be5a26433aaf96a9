import { span } from '../shared/format';

const count = new Intl.NumberFormat();
const oneDecimal = new Intl.NumberFormat(undefined, { maximumFractionDigits: 1, minimumFractionDigits: 1 });

/** How the Reports page writes each kind of figure; null (no value in the period) is a dash. */
export const figure = {
  count: (n: number | null) => (n === null ? '–' : count.format(n)),
  seconds: (s: number | null) => (s === null ? '–' : span(s * 1000)),
  rating: (r: number | null) => (r === null ? '–' : `${oneDecimal.format(r)} / 5`),
};

/** The change from the period before, as "+12 %"; none when either side has no value or the before is 0. */
export function change(now: number | null, before: number | null): string | null {
  if (now === null || before === null || before === 0) return null;
  const pct = Math.round(((now - before) / before) * 100);
  return `${pct > 0 ? '+' : pct < 0 ? '−' : '±'}${Math.abs(pct)} %`;
}
