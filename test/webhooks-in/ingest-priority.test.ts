import { describe, expect, it } from 'vitest';
import { uuid7 } from '../../src/crypto/uuid7.js';
import { webhookQueue } from '../../src/webhooks-in/inbox.queue.js';
import { BUSY_HELD, CHECK_MS, type IngestClock, MAX_PROCESSING_LAG_MS, yieldToIngest } from '../../src/webhooks-in/ingest-priority.js';
import { useTestContext } from '../helpers/app.js';
import { waitFor } from '../helpers/webhooks.js';

const ctx = await useTestContext();

/** A load whose `held` the test sets, counting how often the worker looked. */
function load(held: number) {
  const state = { held, looks: 0 };
  return {
    state,
    get held() {
      state.looks++;
      return state.held;
    },
  };
}

/** A clock that moves only when the test says: a sleeper wakes once time has passed its end. */
function manualClock(start = 1_700_000_000_000) {
  let now = start;
  const sleepers: { until: number; wake: () => void }[] = [];
  const clock: IngestClock = {
    now: () => now,
    sleep: (ms) => new Promise<void>((wake) => sleepers.push({ until: now + ms, wake })),
  };
  return {
    clock,
    sleeping: () => sleepers.length,
    advance(ms: number) {
      now += ms;
      for (const s of sleepers.splice(0)) {
        if (s.until <= now) s.wake();
        else sleepers.push(s);
      }
    },
  };
}

/** A clock whose every sleep passes at once, moving time by what was asked. */
function fastClock(start = 1_700_000_000_000): IngestClock {
  let now = start;
  return {
    now: () => now,
    sleep: async (ms) => {
      now += ms;
    },
  };
}

describe('ingestion goes first in one process', () => {
  it('the webhook worker looks at the ingestion it was started with', async () => {
    // Busy at the first look, calm at the next: the handler waits one check, then processes.
    let looks = 0;
    const ingest = {
      get held() {
        return looks++ === 0 ? BUSY_HELD : 0;
      },
    };
    await webhookQueue.worker!.handle(ctx.deps, [{ id: 'j', data: { ids: [uuid7()] } }], { ingest });
    expect(looks).toBe(2);
  });

  it('holds a batch back while acknowledgements queue, and lets it go once they are answered', async () => {
    const busy = load(BUSY_HELD);
    const time = manualClock();
    let released = false;
    const waiting = yieldToIngest(busy, time.clock).then((waited) => {
      released = true;
      return waited;
    });
    const asleep = () => waitFor(async () => time.sleeping() === 1 || undefined, 'the worker to wait a check');
    for (let i = 0; i < 5; i++) {
      await asleep();
      time.advance(CHECK_MS);
    }
    await asleep();
    expect(released).toBe(false);
    expect(busy.state.looks).toBe(7);
    busy.state.held = BUSY_HELD - 1;
    time.advance(CHECK_MS);
    expect(await waiting).toBe(6 * CHECK_MS);
    expect(released).toBe(true);
  });

  it('does not wait when ingestion keeps up, or when none runs in the process (role worker)', async () => {
    const keepingUp = load(BUSY_HELD - 1);
    const clock = fastClock();
    expect(await yieldToIngest(keepingUp, clock)).toBe(0);
    expect(keepingUp.state.looks).toBe(1);
    expect(await yieldToIngest(undefined, clock)).toBe(0);
  });

  it('lets the batch go once its oldest delivery has waited MAX_PROCESSING_LAG_MS, however long ingestion stays busy', async () => {
    const busy = load(BUSY_HELD * 10);
    const clock = fastClock();
    expect(await yieldToIngest(busy, clock, 60_000, clock.now())).toBe(MAX_PROCESSING_LAG_MS);
    expect(busy.state.held).toBe(BUSY_HELD * 10);
    expect(busy.state.looks).toBeGreaterThan(MAX_PROCESSING_LAG_MS / CHECK_MS);
    // A batch whose oldest delivery came 4 s ago waits what is left of the 10 s.
    expect(await yieldToIngest(busy, clock, 60_000, clock.now() - 4_000)).toBe(MAX_PROCESSING_LAG_MS - 4_000);
  });

  it('waits no longer than the fetch has left of its budget', async () => {
    const busy = load(BUSY_HELD * 10);
    expect(await yieldToIngest(busy, fastClock(), 3 * CHECK_MS)).toBe(3 * CHECK_MS);
  });

  it('does not hold back deliveries that have waited MAX_PROCESSING_LAG_MS, however busy ingestion is', async () => {
    const busy = load(BUSY_HELD * 10);
    const clock = fastClock();
    expect(await yieldToIngest(busy, clock, undefined, clock.now() - MAX_PROCESSING_LAG_MS)).toBe(0);
    expect(busy.state.looks).toBe(0);
    // A moment younger, the same batch waits that moment (one check).
    expect(await yieldToIngest(busy, clock, undefined, clock.now() - MAX_PROCESSING_LAG_MS + 1)).toBe(CHECK_MS);
  });

  it('does not wait once a fetch has spent its budget, so its jobs finish inside their time limit', async () => {
    const busy = load(BUSY_HELD * 10);
    expect(await yieldToIngest(busy, fastClock(), 0)).toBe(0);
    expect(busy.state.looks).toBe(0);
  });
});
