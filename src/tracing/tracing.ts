import type { Tracing, TracingOptions } from './types.js';

export type { Tracing, TracingOptions };

/**
 * OpenTelemetry, present only when OTEL_EXPORTER_OTLP_ENDPOINT is set. This module imports
 * nothing of it: the SDK (./otel.ts) is loaded by a dynamic import in startTracing, so a
 * process without the variable never loads it, and every call here is one check of
 * `active` on the hot path.
 */
let active: Tracing | undefined;

/** The running tracing, or undefined when OTEL_EXPORTER_OTLP_ENDPOINT is unset. */
export function tracing(): Tracing | undefined {
  return active;
}

/** Starts tracing once per process; a second call (tests, role `all`) keeps the first. */
export async function startTracing(options: TracingOptions): Promise<Tracing> {
  if (active) return active;
  const { createTracing } = await import('./otel.js');
  active ??= createTracing(options);
  return active;
}

/** Flushes and stops tracing (at the end of a process's shutdown). */
export async function stopTracing(): Promise<void> {
  const running = active;
  active = undefined;
  await running?.shutdown();
}

/** The `traceparent` to store with a job, or undefined (tracing off, or no span in progress). */
export function currentTraceparent(): string | undefined {
  return active?.traceparent();
}

/** `fn` in a span continuing or linking `origins` (see Tracing.inSpan); just `fn` with tracing off. */
export function inSpan<T>(
  name: string,
  origins: (string | undefined)[],
  attributes: Record<string, string | number>,
  fn: () => Promise<T>,
): Promise<T> {
  return active ? active.inSpan(name, origins, attributes, fn) : fn();
}
