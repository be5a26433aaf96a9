import type { Report } from '../../harness/checks.js';
import type { Postgres, startFake } from '../../harness/service.js';

export interface SuiteOptions {
  /** Seconds of load in the kill, outage and scale-out parts. */
  seconds: number;
  /** Concurrent provider connections. */
  connections: number;
  /** Minutes of soak. */
  soakMinutes: number;
  /** Resumption after a crash must take at most this many seconds. */
  resumeBoundSeconds: number;
  /** Multiplies the fuzz cases of `npm test` in the hostile-input part. */
  fuzzScale: number;
}

export interface PartContext {
  postgres: Postgres;
  fake: Awaited<ReturnType<typeof startFake>>;
  options: SuiteOptions;
}

/**
 * One part of the fault suite: it starts what it needs on the suite's PostgreSQL (a database of
 * its own), puts it under load and faults, and records what it did and checked in `report`.
 * A new part (outbound webhooks under faults, say) is one more module listed in run.ts.
 */
export interface FaultPart {
  key: string;
  title: string;
  run(ctx: PartContext, report: Report): Promise<void>;
}
