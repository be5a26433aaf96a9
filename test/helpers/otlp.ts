import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One span as an OTLP/HTTP JSON export carries it, its attributes flattened. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  parentSpanId: string | undefined;
  name: string;
  kind: number;
  attributes: Record<string, string | number | boolean>;
  links: { traceId: string; spanId: string }[];
  status: { code?: number };
  resource: Record<string, string | number | boolean>;
}

/** OTLP's SpanKind numbers (SPAN_KIND_INTERNAL is 1). */
export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

export interface OtlpReceiver {
  /** The base URL to set as OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  /** Paths and content types of every export, to see what the exporter sends. */
  exports: { path: string; contentType: string | undefined }[];
  close(): Promise<void>;
}

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };

function flatten(attributes: KeyValue[] = []): Record<string, string | number | boolean> {
  const out: Record<string, string | number | boolean> = {};
  for (const { key, value } of attributes) {
    out[key] = value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue ?? ''));
  }
  return out;
}

/** An OTLP/HTTP collector on loopback that keeps every span it is sent (JSON encoding). */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const exports: OtlpReceiver['exports'] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      exports.push({ path: req.url ?? '', contentType: req.headers['content-type'] });
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        resourceSpans: {
          resource: { attributes: KeyValue[] };
          scopeSpans: {
            spans: {
              traceId: string;
              spanId: string;
              parentSpanId?: string;
              name: string;
              kind: number;
              attributes?: KeyValue[];
              links?: { traceId: string; spanId: string }[];
              status?: { code?: number };
            }[];
          }[];
        }[];
      };
      for (const rs of body.resourceSpans) {
        const resource = flatten(rs.resource.attributes);
        for (const ss of rs.scopeSpans) {
          for (const s of ss.spans) {
            spans.push({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId || undefined,
              name: s.name,
              kind: s.kind,
              attributes: flatten(s.attributes),
              links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
              status: s.status ?? {},
              resource,
            });
          }
        }
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    exports,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
