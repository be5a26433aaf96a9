import { IANAZone } from 'luxon';
import { type Static, Type } from 'typebox';
import { errors } from '../http/errors.js';
import { Nullable } from '../http/schemas.js';

/**
 * Business hours (docs/sla.md): when a workspace or a team works, in its own zone. The shape
 * and its checks; what it means for a clock is in ./business-time.ts. Pure.
 */

export const WEEKDAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'] as const;
export type Weekday = (typeof WEEKDAYS)[number];

/** At most this many holidays in one schedule (ten years of them, more or less). */
export const MAX_HOLIDAYS = 500;
const MAX_INTERVALS_PER_DAY = 12;

const Interval = Type.Array(Type.String({ description: '"HH:MM", 24-hour; an end may be "24:00"' }), { minItems: 2, maxItems: 2 });

const Holidays = Type.Array(Type.String({ description: '"YYYY-MM-DD", local date' }), {
  maxItems: MAX_HOLIDAYS,
  description: 'dates closed all day',
});

const Timezone = Type.String({ minLength: 1, maxLength: 64, description: 'an IANA zone name, e.g. "Europe/Berlin"' });
const Weekly = Type.Object(
  Object.fromEntries(WEEKDAYS.map((d) => [d, Type.Optional(Type.Array(Interval, { maxItems: MAX_INTERVALS_PER_DAY }))])) as Record<
    Weekday,
    ReturnType<typeof Type.Optional<ReturnType<typeof Type.Array<typeof Interval>>>>
  >,
  { additionalProperties: false, description: 'open intervals of each weekday, local time; an empty list = closed' },
);

/** Business hours as stored and shown: `holidays` always there. */
export const BusinessHoursSchema = Type.Object(
  { timezone: Timezone, weekly: Weekly, holidays: Holidays },
  { additionalProperties: false, title: 'BusinessHours' },
);
export type BusinessHours = Static<typeof BusinessHoursSchema>;

/** Business hours as a request sends them: `holidays` may be left out (none). */
export const BusinessHoursInputSchema = Type.Object(
  { timezone: Timezone, weekly: Weekly, holidays: Type.Optional(Holidays) },
  { additionalProperties: false, title: 'BusinessHoursInput' },
);
export type BusinessHoursInput = Static<typeof BusinessHoursInputSchema>;

/** Business hours as a setting: null = always open. */
export const BusinessHoursSetting = Nullable(BusinessHoursSchema);

/** Business hours as a request sets them: null = always open. */
export const BusinessHoursInputSetting = Nullable(BusinessHoursInputSchema);

const TIME = /^(?:[01][0-9]|2[0-3]):[0-5][0-9]$/;
const DATE = /^[0-9]{4}-(?:0[1-9]|1[0-2])-(?:0[1-9]|[12][0-9]|3[01])$/;

/** Minutes after local midnight of "HH:MM" ("24:00" = 1440). */
export function minutesOf(time: string): number {
  return Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
}

function validDate(s: string): boolean {
  if (!DATE.test(s)) return false;
  const [y, m, d] = s.split('-').map(Number) as [number, number, number];
  const at = new Date(Date.UTC(y, m - 1, d));
  return at.getUTCMonth() === m - 1 && at.getUTCDate() === d;
}

/**
 * Business hours as stored, or a 422 naming the field that is wrong (`field` is where the
 * value sits in the request: `businessHours`). Each day's intervals come back sorted, the
 * holidays sorted and without repeats (none when left out).
 */
export function checkBusinessHours(value: BusinessHoursInput, field = 'businessHours'): BusinessHours {
  if (!IANAZone.isValidZone(value.timezone) || value.timezone !== value.timezone.trim())
    throw errors.validation(`${field}.timezone: "${value.timezone.slice(0, 64)}" is not an IANA zone name (e.g. "Europe/Berlin")`);
  const weekly = {} as Required<BusinessHours['weekly']>;
  let open = 0;
  for (const day of WEEKDAYS) {
    const intervals = value.weekly[day] ?? [];
    intervals.forEach(([start, end], i) => {
      const at = `${field}.weekly.${day}[${i}]`;
      if (!TIME.test(start!)) throw errors.validation(`${at}: start "${String(start).slice(0, 10)}" is not a time "HH:MM"`);
      if (!TIME.test(end!) && end !== '24:00') throw errors.validation(`${at}: end "${String(end).slice(0, 10)}" is not a time "HH:MM"`);
      if (minutesOf(end!) <= minutesOf(start!)) throw errors.validation(`${at}: ends at ${end}, not after its start ${start}`);
    });
    const sorted = [...intervals].sort((a, b) => minutesOf(a[0]!) - minutesOf(b[0]!));
    for (let i = 1; i < sorted.length; i++) {
      if (minutesOf(sorted[i]![0]!) < minutesOf(sorted[i - 1]![1]!))
        throw errors.validation(
          `${field}.weekly.${day}: ${sorted[i - 1]!.join('–')} and ${sorted[i]!.join('–')} overlap; intervals of a day must not`,
        );
    }
    weekly[day] = sorted.map(([s, e]) => [s!, e!]);
    open += sorted.length;
  }
  if (open === 0) throw errors.validation(`${field}.weekly: no day has an interval; use null for always open`);
  const holidays = value.holidays ?? [];
  const bad = holidays.findIndex((d) => !validDate(d));
  if (bad >= 0) throw errors.validation(`${field}.holidays[${bad}]: "${holidays[bad]!.slice(0, 20)}" is not a date "YYYY-MM-DD"`);
  return { timezone: value.timezone, weekly, holidays: [...new Set(holidays)].sort() };
}
