import diagnostics from 'node:diagnostics_channel';
import {
  type Context,
  context,
  type Link,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import pg from 'pg';
import type { Tracing, TracingOptions } from './types.js';

/** The longest statement text a pg span carries (texts are parameterised: no values in them). */
const QUERY_TEXT_MAX = 2_000;

/**
 * The OpenTelemetry SDK with the project's own instrumentation: loaded only by startTracing.
 * No module hooks (which an ESM process would need registered before its first import): the
 * three sources are reached directly: Fastify hooks, pg's Client.prototype.query, and undici's
 * diagnostics channels, which global fetch publishes on too.
 */
export function createTracing(options: TracingOptions): Tracing {
  const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ 'service.name': 'inbox', 'service.version': options.version, 'inbox.role': options.role }),
    spanProcessors: [new BatchSpanProcessor(exporter)],
  });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  trace.setGlobalTracerProvider(provider);
  const propagator = new W3CTraceContextPropagator();
  propagation.setGlobalPropagator(propagator);
  const tracer = provider.getTracer('inbox', options.version);

  const unpatchPg = tracePg(tracer);
  const unsubscribeFetch = traceFetch(tracer, propagator, new URL(options.endpoint).origin);

  const traceparentOf = (ctx: Context): string | undefined => {
    const carrier: Record<string, string> = {};
    propagator.inject(ctx, carrier, { set: (c, k, v) => (c[k] = v) });
    return carrier.traceparent;
  };
  const spanContextOf = (traceparent: string) =>
    trace.getSpanContext(propagator.extract(ROOT_CONTEXT, { traceparent }, { get: (c, k) => c[k], keys: (c) => Object.keys(c) }));

  return {
    traceparent: () => traceparentOf(context.active()),
    async inSpan(name, origins, attributes, fn) {
      const distinct = [...new Set(origins.filter((o): o is string => o !== undefined))];
      const parents = distinct.flatMap((o) => {
        const sc = spanContextOf(o);
        return sc && trace.isSpanContextValid(sc) ? [sc] : [];
      });
      // One origin: the work continues that trace. Several: a trace of its own, linked to each
      // (a batch serves many requests; it cannot be the child of all of them).
      const parent = parents.length === 1 ? trace.setSpanContext(ROOT_CONTEXT, parents[0]!) : ROOT_CONTEXT;
      const links: Link[] = parents.length > 1 ? parents.map((sc) => ({ context: sc })) : [];
      const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes, links }, parent);
      try {
        return await context.with(trace.setSpan(parent, span), fn);
      } catch (err) {
        failed(span, err);
        throw err;
      } finally {
        span.end();
      }
    },
    instrument(app) {
      traceFastify(app, tracer, propagator, contextManager);
    },
    flush: () => provider.forceFlush(),
    async shutdown() {
      unpatchPg();
      unsubscribeFetch();
      await provider.shutdown();
      trace.disable();
      propagation.disable();
      context.disable();
    },
  };
}

type Tracer = ReturnType<BasicTracerProvider['getTracer']>;

function failed(span: Span, err: unknown): void {
  if (err instanceof Error) span.recordException(err);
  span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
}

const headerGetter = {
  get: (headers: Record<string, string | string[] | undefined>, key: string) => headers[key],
  keys: (headers: Record<string, string | string[] | undefined>) => Object.keys(headers),
};

/**
 * A SERVER span per request, named by its route (never its path: connection webhook URLs hold
 * their token), continuing a `traceparent` the caller sent. The rest of the request runs in the
 * span's context: Fastify's hook chain continues inside `done`, and the request stream is bound
 * to the context so the body's events, which the socket emits, keep it too.
 */
function traceFastify(
  app: FastifyInstance,
  tracer: Tracer,
  propagator: W3CTraceContextPropagator,
  contextManager: AsyncLocalStorageContextManager,
): void {
  const spans = new WeakMap<FastifyRequest, Span>();
  app.addHook('onRequest', (request, _reply, done) => {
    const parent = propagator.extract(ROOT_CONTEXT, request.headers, headerGetter);
    const span = tracer.startSpan(
      request.method,
      { kind: SpanKind.SERVER, attributes: { 'http.request.method': request.method, 'inbox.request_id': request.id } },
      parent,
    );
    spans.set(request, span);
    const ctx = trace.setSpan(parent, span);
    contextManager.bind(ctx, request.raw);
    context.with(ctx, done);
  });
  const end = (request: FastifyRequest, status: number | undefined) => {
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    const route = request.routeOptions.url;
    if (route) {
      span.updateName(`${request.method} ${route}`);
      span.setAttribute('http.route', route);
    }
    if (status === undefined) span.setStatus({ code: SpanStatusCode.ERROR, message: 'request aborted' });
    else {
      span.setAttribute('http.response.status_code', status);
      if (status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  };
  app.addHook('onResponse', (request, reply, done) => {
    end(request, reply.statusCode);
    done();
  });
  app.addHook('onRequestAbort', (request, done) => {
    end(request, undefined);
    done();
  });
}

/** The statement's first word, as the span's name (SELECT, INSERT, WITH, BEGIN…). */
function operationOf(text: string): string {
  const word = /^\s*(?:--[^\n]*\n\s*|\/\*[\s\S]*?\*\/\s*)*([A-Za-z]+)/.exec(text)?.[1];
  return word ? word.toUpperCase() : 'postgresql';
}

type QueryArgs = [unknown, ...unknown[]];

/**
 * A CLIENT span per statement of every pool (the service's, pg-boss's), but only inside a
 * traced request or job: pg-boss polls several times a second, and a root span per poll would
 * bury the traces that matter.
 */
function tracePg(tracer: Tracer): () => void {
  const proto = pg.Client.prototype as unknown as { query: (...args: QueryArgs) => unknown };
  const original = proto.query;
  proto.query = function (this: pg.Client, ...args: QueryArgs) {
    const active = context.active();
    const config = args[0] as string | { text?: unknown; submit?: unknown } | null | undefined;
    if (!trace.getSpan(active) || config == null) return original.apply(this, args);
    const text = typeof config === 'string' ? config : config.text;
    // A cursor or stream (a Submittable) reports through its own events; not traced.
    if (typeof text !== 'string' || (typeof config === 'object' && typeof config.submit === 'function')) return original.apply(this, args);
    const operation = operationOf(text);
    const span = tracer.startSpan(
      operation,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operation,
          'db.query.text': text.length > QUERY_TEXT_MAX ? text.slice(0, QUERY_TEXT_MAX) : text,
          'db.namespace': this.database ?? '',
          'server.address': this.host ?? '',
          'server.port': this.port ?? 0,
        },
      },
      active,
    );
    const last = args.length - 1;
    const callback = args[last];
    if (last > 0 && typeof callback === 'function') {
      // pg-pool's own query() hands a callback.
      args[last] = (err: unknown, result: unknown) => {
        if (err) failed(span, err);
        span.end();
        return (callback as (e: unknown, r: unknown) => unknown)(err, result);
      };
      return original.apply(this, args);
    }
    const result = original.apply(this, args) as Promise<unknown>;
    return result.then(
      (r) => {
        span.end();
        return r;
      },
      (err: unknown) => {
        failed(span, err);
        span.end();
        throw err;
      },
    );
  };
  return () => {
    proto.query = original;
  };
}

interface UndiciRequest {
  origin?: string | URL;
  method?: string;
  addHeader(name: string, value: string): unknown;
}

/**
 * A CLIENT span per outbound HTTP call made with undici or global fetch (providers, outbound
 * webhooks, media downloads), from undici's diagnostics channels; the call carries the span's
 * `traceparent`. The span ends with the response's headers (a body nobody reads must not keep
 * it open), and names only the method and the host: provider URLs can hold a token in their path.
 */
function traceFetch(tracer: Tracer, propagator: W3CTraceContextPropagator, exporterOrigin: string): () => void {
  const spans = new WeakMap<object, Span>();
  const onCreate = (message: unknown) => {
    const { request } = message as { request: UndiciRequest };
    const origin = request.origin === undefined ? undefined : new URL(String(request.origin));
    if (!origin || origin.origin === exporterOrigin) return;
    const method = request.method ?? 'GET';
    const active = context.active();
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': method,
          'server.address': origin.hostname,
          'server.port': Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80),
        },
      },
      active,
    );
    spans.set(request, span);
    const carrier: Record<string, string> = {};
    propagator.inject(trace.setSpan(active, span), carrier, { set: (c, k, v) => (c[k] = v) });
    for (const [name, value] of Object.entries(carrier)) request.addHeader(name, value);
  };
  const onHeaders = (message: unknown) => {
    const { request, response } = message as { request: object; response: { statusCode: number } };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  const onError = (message: unknown) => {
    const { request, error } = message as { request: object; error: unknown };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    failed(span, error);
    span.end();
  };
  diagnostics.subscribe('undici:request:create', onCreate);
  diagnostics.subscribe('undici:request:headers', onHeaders);
  diagnostics.subscribe('undici:request:error', onError);
  return () => {
    diagnostics.unsubscribe('undici:request:create', onCreate);
    diagnostics.unsubscribe('undici:request:headers', onHeaders);
    diagnostics.unsubscribe('undici:request:error', onError);
  };
}
