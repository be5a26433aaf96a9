import type { FastifyInstance } from 'fastify';

/** What the tracing module offers (./otel.ts implements it, loaded only when tracing is on). */
export interface Tracing {
  /** The W3C `traceparent` of the span in progress, to carry in job data. */
  traceparent(): string | undefined;
  /**
   * Runs `fn` in a span named `name`. One distinct origin among `origins` (traceparents read
   * from job data) becomes its parent, so the span continues that trace; several become links
   * of a span that starts its own trace.
   */
  inSpan<T>(name: string, origins: (string | undefined)[], attributes: Record<string, string | number>, fn: () => Promise<T>): Promise<T>;
  /** A span per request (SERVER), in whose context the request's own work runs. */
  instrument(app: FastifyInstance): void;
  /** Sends what is buffered (tests wait on the collector with it). */
  flush(): Promise<void>;
  /** Sends what is buffered and stops. */
  shutdown(): Promise<void>;
}

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL. */
  endpoint: string;
  /** `inbox.role` of every span (all, api, worker). */
  role: string;
  version: string;
}
