/**
 * How many cases each property runs: its base count in `npm test`, times FUZZ_SCALE, which the
 * fault suite sets (`npm run faults` runs the fuzz with thousands of cases per adapter). The
 * seed stays the same, so a failure at any scale reproduces.
 */
const scale = Math.max(0.1, Number(process.env.FUZZ_SCALE ?? 1) || 1);

export const runs = (base: number): number => Math.max(10, Math.round(base * scale));

/** A request the service has not answered in this long counts as hung. */
export const FUZZ_TIMEOUT_MS = 5_000;
