import { describe, expect, it } from 'vitest';
import { pickedDate, snoozeUntil } from '../../src/console/inbox/snooze.js';

// Local times, as the console computes them in the agent's browser.
const at = (y: number, m: number, d: number, h = 0, min = 0) => new Date(y, m - 1, d, h, min);

describe('snooze choices', () => {
  it('1 hour is an hour from now', () => {
    const now = at(2026, 11, 25, 16, 20);
    expect(snoozeUntil('hour', now).getTime() - now.getTime()).toBe(3_600_000);
  });

  it('tomorrow is the next day at 9:00, even late at night', () => {
    expect(snoozeUntil('tomorrow', at(2026, 11, 25, 23, 59))).toEqual(at(2026, 11, 26, 9));
    expect(snoozeUntil('tomorrow', at(2026, 12, 31, 8))).toEqual(at(2027, 1, 1, 9));
  });

  it('next week is the coming Monday at 9:00; on a Monday, the one after', () => {
    expect(snoozeUntil('next-week', at(2026, 11, 25, 10))).toEqual(at(2026, 11, 30, 9)); // a Wednesday
    expect(snoozeUntil('next-week', at(2026, 11, 29, 22))).toEqual(at(2026, 11, 30, 9)); // a Sunday
    expect(snoozeUntil('next-week', at(2026, 11, 30, 7))).toEqual(at(2026, 12, 7, 9)); // a Monday
  });

  it('a picked date must be in the future', () => {
    const now = at(2026, 11, 25, 12);
    expect(pickedDate('', now)).toBeNull();
    expect(pickedDate('not a date', now)).toBeNull();
    expect(pickedDate('2026-11-25T11:59', now)).toBeNull();
    expect(pickedDate('2026-11-25T12:00', now)).toBeNull();
    expect(pickedDate('2026-11-25T12:01', now)).toEqual(at(2026, 11, 25, 12, 1));
  });
});
