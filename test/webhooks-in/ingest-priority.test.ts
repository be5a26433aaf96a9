import { describe, expect, it } from 'vitest';
import type { Deps } from '../../src/deps.js';
import { BUSY_HELD, ingestLoadOf, MAX_PROCESSING_LAG_MS, registerIngest, yieldToIngest } from '../../src/webhooks-in/ingest-priority.js';
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

describe('ingestion goes first in one process', () => {
  it('is what the app registers for its deps: the worker of the same process reads its writer', () => {
    expect(ingestLoadOf(ctx.deps)?.held).toBe(0);
  });

  it('holds a batch back while acknowledgements queue, and lets it go once they are answered', async () => {
    const deps = {} as Deps;
    const busy = load(BUSY_HELD);
    registerIngest(deps, busy);
    let released = false;
    const waiting = yieldToIngest(deps).then(() => (released = true));
    await waitFor(async () => busy.state.looks >= 5 || undefined, 'the worker to look at ingestion several times');
    expect(released).toBe(false);
    busy.state.held = BUSY_HELD - 1;
    await waiting;
    expect(released).toBe(true);
  });

  it('does not wait when ingestion keeps up, or when none runs in the process (role worker)', async () => {
    const calm = {} as Deps;
    const keepingUp = load(BUSY_HELD - 1);
    registerIngest(calm, keepingUp);
    await yieldToIngest(calm);
    expect(keepingUp.state.looks).toBe(1);
    expect(ingestLoadOf({} as Deps)).toBeUndefined();
    await yieldToIngest({} as Deps);
  });

  it('lets the batch go after MAX_YIELD_MS even when ingestion stays busy, so processing never stops', async () => {
    const deps = {} as Deps;
    const busy = load(BUSY_HELD * 10);
    registerIngest(deps, busy);
    expect(await yieldToIngest(deps)).toBeGreaterThan(0);
    expect(busy.state.held).toBe(BUSY_HELD * 10);
    expect(busy.state.looks).toBeGreaterThan(1);
  });

  it('does not hold back deliveries that have waited MAX_PROCESSING_LAG_MS, however busy ingestion is', async () => {
    const deps = {} as Deps;
    const busy = load(BUSY_HELD * 10);
    registerIngest(deps, busy);
    expect(await yieldToIngest(deps, undefined, Date.now() - MAX_PROCESSING_LAG_MS)).toBe(0);
    expect(busy.state.looks).toBe(0);
  });

  it('does not wait once a fetch has spent its budget, so its jobs finish inside their time limit', async () => {
    const deps = {} as Deps;
    const busy = load(BUSY_HELD * 10);
    registerIngest(deps, busy);
    expect(await yieldToIngest(deps, 0)).toBe(0);
    expect(busy.state.looks).toBe(0);
  });
});
