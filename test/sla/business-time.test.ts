import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../../src/http/errors.js';
import { type BusinessHours, checkBusinessHours, WEEKDAYS } from '../../src/sla/business-hours.js';
import { addBusinessTime, businessTimeBetween, insideBusinessHours } from '../../src/sla/business-time.js';

const MINUTE = 60_000;
const NINE_TO_FIVE = { timezone: 'Europe/Berlin', holidays: [] as string[] };
const weekdays = (intervals: [string, string][]): BusinessHours['weekly'] => ({
  mon: intervals,
  tue: intervals,
  wed: intervals,
  thu: intervals,
  fri: intervals,
  sat: [],
  sun: [],
});

/** The definition, one minute at a time: the end of the minute in which the count reaches `minutes`. */
function reference(hours: BusinessHours, from: Date, minutes: number, limit: number): Date | undefined {
  let counted = 0;
  for (let t = from.getTime(), i = 0; i < limit; t += MINUTE, i++) {
    if (insideBusinessHours(hours, new Date(t)) && ++counted === minutes) return new Date(t + MINUTE);
  }
  return undefined;
}

const ZONES = ['Europe/Berlin', 'America/New_York', 'Australia/Lord_Howe', 'Asia/Kolkata', 'America/Santiago', 'Pacific/Chatham', 'UTC'];
const pad = (n: number) => String(n).padStart(2, '0');
const hhmm = (m: number) => `${pad(Math.floor(m / 60))}:${pad(m % 60)}`;

/** A day's intervals: sorted distinct minute marks taken in pairs (so they never overlap). */
const day = fc.uniqueArray(fc.integer({ min: 0, max: 1440 }), { maxLength: 6 }).map((marks) => {
  const sorted = [...marks].sort((a, b) => a - b);
  const out: [string, string][] = [];
  for (let i = 0; i + 1 < sorted.length; i += 2) out.push([hhmm(sorted[i]!), sorted[i + 1] === 1440 ? '24:00' : hhmm(sorted[i + 1]!)]);
  return out;
});
// Instants around the DST changes of 2026 in every zone above, on whole minutes.
const instant = fc.integer({ min: Date.UTC(2026, 2, 1) / MINUTE, max: Date.UTC(2026, 10, 30) / MINUTE }).map((m) => new Date(m * MINUTE));
const schedule = fc
  .record({
    timezone: fc.constantFrom(...ZONES),
    weekly: fc.record(Object.fromEntries(WEEKDAYS.map((d) => [d, day])) as Record<(typeof WEEKDAYS)[number], typeof day>),
    holidays: fc.uniqueArray(
      fc.integer({ min: 0, max: 300 }).map((d) => new Date(Date.UTC(2026, 2, 1) + d * 86_400_000).toISOString().slice(0, 10)),
      { maxLength: 20 },
    ),
  })
  .filter((h) => WEEKDAYS.some((d) => h.weekly[d].length > 0));
const SEARCH = 21 * 1440;

describe('business time', () => {
  it('matches the minute-by-minute definition, lands inside hours and is monotonic', () => {
    fc.assert(
      fc.property(schedule, instant, fc.integer({ min: 1, max: 600 }), fc.integer({ min: 0, max: 600 }), (raw, from, minutes, later) => {
        const hours = checkBusinessHours(raw);
        const expected = reference(hours, from, minutes, SEARCH);
        fc.pre(expected !== undefined);
        const due = addBusinessTime(hours, from, minutes * MINUTE)!;
        expect(due.toISOString()).toBe(expected!.toISOString());
        expect(insideBusinessHours(hours, new Date(due.getTime() - 1))).toBe(true);
        expect(businessTimeBetween(hours, from, due)).toBe(minutes * MINUTE);
        // Later starts and longer targets are never due earlier.
        expect(addBusinessTime(hours, new Date(from.getTime() + later * MINUTE), minutes * MINUTE)!.getTime()).toBeGreaterThanOrEqual(
          due.getTime(),
        );
        expect(addBusinessTime(hours, from, (minutes + later) * MINUTE)!.getTime()).toBeGreaterThanOrEqual(due.getTime());
      }),
      { seed: 36, numRuns: 150 },
    );
  });

  it('is wall time without hours', () => {
    const from = new Date('2026-03-07T10:00:00Z');
    expect(addBusinessTime(null, from, 3_600_000)!.toISOString()).toBe('2026-03-07T11:00:00.000Z');
    expect(insideBusinessHours(null, from)).toBe(true);
  });

  it('takes a Friday 16:30 opening with an hour to Monday 09:30', () => {
    const hours = checkBusinessHours({ ...NINE_TO_FIVE, weekly: weekdays([['09:00', '17:00']]) });
    // Friday 2026-03-06 16:30 in Berlin (UTC+1).
    const due = addBusinessTime(hours, new Date('2026-03-06T15:30:00Z'), 3_600_000)!;
    expect(due.toISOString()).toBe('2026-03-09T08:30:00.000Z');
  });

  it('crosses a daylight-saving change in local time', () => {
    const hours = checkBusinessHours({ ...NINE_TO_FIVE, weekly: weekdays([['09:00', '17:00']]) });
    // Friday 2026-03-27 16:30 CET; Berlin moves to CEST on Sunday the 29th: Monday 09:30 is 07:30Z.
    expect(addBusinessTime(hours, new Date('2026-03-27T15:30:00Z'), 3_600_000)!.toISOString()).toBe('2026-03-30T07:30:00.000Z');
    // A night shift through the change: the skipped hour is no business time.
    const night = checkBusinessHours({
      timezone: 'Europe/Berlin',
      holidays: [],
      weekly: { mon: [], tue: [], wed: [], thu: [], fri: [], sat: [['22:00', '24:00']], sun: [['00:00', '06:00']] },
    });
    // Saturday 23:00 CET + 4 h: 23:00–24:00, 00:00–02:00 CET, then 03:00–04:00 CEST (02:00–03:00 does not exist).
    expect(addBusinessTime(night, new Date('2026-03-28T22:00:00Z'), 4 * 3_600_000)!.toISOString()).toBe('2026-03-29T02:00:00.000Z');
  });

  it('skips holidays', () => {
    const hours = checkBusinessHours({ ...NINE_TO_FIVE, holidays: ['2026-12-25', '2026-12-28'], weekly: weekdays([['09:00', '17:00']]) });
    // Thursday 24 December 16:30 CET + 1 h: the 25th is a holiday, the 26th/27th a weekend, the 28th a holiday.
    expect(addBusinessTime(hours, new Date('2026-12-24T15:30:00Z'), 3_600_000)!.toISOString()).toBe('2026-12-29T08:30:00.000Z');
    expect(insideBusinessHours(hours, new Date('2026-12-25T10:00:00Z'))).toBe(false);
  });
});

describe('business hours checks', () => {
  const valid = { timezone: 'America/New_York', holidays: ['2026-07-04'], weekly: weekdays([['09:00', '17:00']]) };
  const refused = (value: unknown, field: string) => {
    let caught: unknown;
    try {
      checkBusinessHours(value as BusinessHours);
    } catch (error) {
      caught = error;
    }
    expect(caught, JSON.stringify(value)).toBeInstanceOf(AppError);
    expect((caught as AppError).status).toBe(422);
    expect((caught as AppError).message).toContain(field);
  };

  it('refuses bad zones, times, overlaps, holidays and a week without hours, naming the field', () => {
    refused({ ...valid, timezone: 'Mars/Olympus' }, 'businessHours.timezone');
    refused({ ...valid, timezone: '+05:00' }, 'businessHours.timezone');
    refused({ ...valid, weekly: { ...valid.weekly, tue: [['9:00', '17:00']] } }, 'businessHours.weekly.tue[0]');
    refused({ ...valid, weekly: { ...valid.weekly, wed: [['09:00', '25:00']] } }, 'businessHours.weekly.wed[0]');
    refused({ ...valid, weekly: { ...valid.weekly, thu: [['17:00', '09:00']] } }, 'businessHours.weekly.thu[0]');
    refused(
      {
        ...valid,
        weekly: {
          ...valid.weekly,
          fri: [
            ['09:00', '13:00'],
            ['12:00', '17:00'],
          ],
        },
      },
      'businessHours.weekly.fri',
    );
    refused({ ...valid, holidays: ['2026-02-30'] }, 'businessHours.holidays[0]');
    refused({ ...valid, holidays: ['2026-07-04', 'christmas'] }, 'businessHours.holidays[1]');
    refused({ ...valid, weekly: weekdays([]) }, 'businessHours.weekly');
  });

  it('sorts intervals and holidays', () => {
    const checked = checkBusinessHours({
      ...valid,
      holidays: ['2026-12-25', '2026-07-04', '2026-12-25'],
      weekly: {
        ...valid.weekly,
        mon: [
          ['13:00', '17:00'],
          ['09:00', '12:00'],
        ],
      },
    });
    expect(checked.weekly.mon).toEqual([
      ['09:00', '12:00'],
      ['13:00', '17:00'],
    ]);
    expect(checked.holidays).toEqual(['2026-07-04', '2026-12-25']);
  });
});
