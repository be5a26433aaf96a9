import { applyDeliveries } from '../../src/messaging/apply-events.js';
import type { TestContext } from './app.js';

/** A weekly schedule with the same `intervals` Monday to Friday, the weekend closed. */
export const week = (intervals: string[][]) => ({
  mon: intervals,
  tue: intervals,
  wed: intervals,
  thu: intervals,
  fri: intervals,
  sat: [],
  sun: [],
});

/** Business hours 09:00–17:00 in Berlin on weekdays, no holidays. */
export const BERLIN_9_TO_5 = { timezone: 'Europe/Berlin', weekly: week([['09:00', '17:00']]), holidays: [] };

let seq = 0;

/**
 * A contact's SMS to `connection`, applied as the worker applies a delivery, at `at` (the
 * test's clock); delivered `times` times with the same message id, as a provider retrying
 * does. Answers the thread's id.
 */
export async function smsFromContact(
  ctx: TestContext,
  connection: { externalAccountId: string },
  from: string,
  options: { text?: string; at?: Date; times?: number } = {},
): Promise<number> {
  const id = `m-${process.pid}-${++seq}`;
  for (let i = 0; i < (options.times ?? 1); i++)
    await ctx.deps.db.transaction().execute((trx) =>
      applyDeliveries(
        ctx.deps,
        trx,
        [
          {
            deliveryId: `${id}-${i}`,
            integrationKey: 'sms',
            events: [
              {
                type: 'message',
                externalAccountId: connection.externalAccountId,
                externalMessageId: id,
                contact: { externalId: from },
                text: options.text ?? 'hi',
              },
            ],
          },
        ],
        options.at ?? ctx.deps.now(),
      ),
    );
  const row = await ctx.deps.db.selectFrom('messages').select('thread_id').where('external_id', '=', id).executeTakeFirstOrThrow();
  return row.thread_id;
}
