import { DateTime } from 'luxon';
import { type BusinessHours, minutesOf, WEEKDAYS } from './business-hours.js';

/**
 * Business time (docs/sla.md): a clock that runs only while business hours are open. Pure;
 * every zone rule comes from luxon (the IANA database), none is written here.
 *
 * The meaning: an instant is inside hours when its local wall time (in the schedule's zone)
 * falls in one of its weekday's intervals and its local date is no holiday. Around a DST
 * change that is not the same as "from the start time to the end time": an interval in the
 * hour skipped in spring is shorter, one in the hour repeated in autumn counts twice. Days
 * without a change are worked out from their intervals' ends; a day with one is read minute by
 * minute (two days a year per zone), so both follow the same meaning.
 */

const MINUTE = 60_000;
/** How far ahead a clock looks for open time before it says the schedule never opens. */
const HORIZON_DAYS = 3 * 366;

/** Whether `at` is inside the hours; null hours are always open. */
export function insideBusinessHours(hours: BusinessHours | null, at: Date): boolean {
  if (!hours) return true;
  const local = DateTime.fromJSDate(at, { zone: hours.timezone });
  if (hours.holidays.includes(local.toISODate()!)) return false;
  const minute = local.hour * 60 + local.minute;
  return (hours.weekly[WEEKDAYS[local.weekday - 1]!] ?? []).some(([s, e]) => minute >= minutesOf(s!) && minute < minutesOf(e!));
}

/** The open stretches of one local day, as [from, to) in epoch milliseconds, in order. */
function openStretches(hours: BusinessHours, day: DateTime): [number, number][] {
  if (hours.holidays.includes(day.toISODate()!)) return [];
  const intervals = hours.weekly[WEEKDAYS[day.weekday - 1]!] ?? [];
  if (intervals.length === 0) return [];
  const next = day.plus({ days: 1 }).startOf('day');
  const steady = day.offset === next.offset && day.hour === 0 && day.minute === 0;
  if (steady) {
    // No offset change inside the day: local wall time moves with real time.
    return intervals.map(([s, e]) => [day.plus({ minutes: minutesOf(s!) }).toMillis(), day.plus({ minutes: minutesOf(e!) }).toMillis()]);
  }
  const stretches: [number, number][] = [];
  for (let t = day.toMillis(); t < next.toMillis(); t += MINUTE) {
    if (!insideBusinessHours(hours, new Date(t))) continue;
    const last = stretches[stretches.length - 1];
    if (last && last[1] === t) last[1] = t + MINUTE;
    else stretches.push([t, t + MINUTE]);
  }
  return stretches;
}

/**
 * The instant at which `ms` of business time has passed since `from`: with null hours,
 * `from + ms`. With `ms` > 0 the answer always lies inside hours (or at the end of an open
 * stretch). Null when that much open time is not found within three years (holidays closing
 * every open day that long, or a target longer than the open time of three years): a search
 * that stops, not an error.
 */
export function addBusinessTime(hours: BusinessHours | null, from: Date, ms: number): Date | null {
  if (!hours || ms <= 0) return new Date(from.getTime() + Math.max(0, ms));
  const start = from.getTime();
  let left = ms;
  let day = DateTime.fromJSDate(from, { zone: hours.timezone }).startOf('day');
  for (let i = 0; i < HORIZON_DAYS; i++, day = day.plus({ days: 1 }).startOf('day')) {
    for (const [a, b] of openStretches(hours, day)) {
      const s = Math.max(a, start);
      if (b <= s) continue;
      if (left <= b - s) return new Date(s + left);
      left -= b - s;
    }
  }
  return null;
}

/** Business time between two instants, in milliseconds (0 when `to` is not after `from`). */
export function businessTimeBetween(hours: BusinessHours | null, from: Date, to: Date): number {
  const start = from.getTime();
  const end = to.getTime();
  if (end <= start) return 0;
  if (!hours) return end - start;
  let total = 0;
  let day = DateTime.fromJSDate(from, { zone: hours.timezone }).startOf('day');
  while (day.toMillis() < end) {
    for (const [a, b] of openStretches(hours, day)) total += Math.max(0, Math.min(b, end) - Math.max(a, start));
    day = day.plus({ days: 1 }).startOf('day');
  }
  return total;
}
