/**
 * The Reports page's periods: the last N days up to today, as dates in the browser's zone
 * (the service reads a date as the whole day there, `to` included), and the N days before.
 */
export const PERIODS = [7, 30, 90] as const;
export type PeriodDays = (typeof PERIODS)[number];

export interface Period {
  from: string;
  to: string;
  timezone: string;
}

/** The browser's own zone; UTC when it names none. */
export const browserZone = (): string => Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';

/** A local date as YYYY-MM-DD. */
function isoDate(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

const daysBefore = (d: Date, n: number) => new Date(d.getFullYear(), d.getMonth(), d.getDate() - n);

/** The chosen period and the one of the same length just before it. */
export function periods(days: PeriodDays, now = new Date()): { current: Period; previous: Period } {
  const timezone = browserZone();
  const first = daysBefore(now, days - 1);
  return {
    current: { from: isoDate(first), to: isoDate(now), timezone },
    previous: { from: isoDate(daysBefore(first, days)), to: isoDate(daysBefore(first, 1)), timezone },
  };
}
