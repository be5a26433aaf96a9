/**
 * The snooze choices (docs/console.md, "Actions"), in the agent's local time: an hour from
 * now, tomorrow at 9:00, next Monday at 9:00, or a date and time the agent picks.
 */
export type SnoozeChoice = 'hour' | 'tomorrow' | 'next-week';

export const SNOOZE_CHOICES: [SnoozeChoice, string][] = [
  ['hour', '1 hour'],
  ['tomorrow', 'Tomorrow 9:00'],
  ['next-week', 'Next week'],
];

export function snoozeUntil(choice: SnoozeChoice, now = new Date()): Date {
  if (choice === 'hour') return new Date(now.getTime() + 3_600_000);
  const d = new Date(now);
  d.setHours(9, 0, 0, 0);
  if (choice === 'tomorrow') d.setDate(d.getDate() + 1);
  // Next week starts on the coming Monday (a Monday itself moves a whole week on).
  else d.setDate(d.getDate() + ((8 - d.getDay()) % 7 || 7));
  return d;
}

/** A `datetime-local` value (local time) as a Date, or null when empty or not in the future. */
export function pickedDate(value: string, now = new Date()): Date | null {
  if (!value) return null;
  const d = new Date(value);
  return Number.isNaN(d.getTime()) || d <= now ? null : d;
}
