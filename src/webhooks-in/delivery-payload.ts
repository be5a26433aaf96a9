import { parseBody } from '../channels/channel.js';
import { adapterFor } from '../channels/index.js';
import type { InboxRow } from './inbox.queries.js';

/**
 * A stored delivery's payloadJson (docs/api.md): its raw body as its adapter parses it, the
 * payload ingestion read (webhooks.routes.ts). Ingestion no longer writes payload_json
 * (migrations 0004 and 0007); a row stored before keeps its own, which is the same value.
 * Undefined when the body does not parse.
 */
export function deliveryPayload(row: Pick<InboxRow, 'integration_key' | 'raw_body' | 'payload_json'>): unknown {
  if (row.payload_json !== null && row.payload_json !== undefined) return row.payload_json;
  const adapter = adapterFor(row.integration_key);
  return adapter ? parseBody(adapter, row.raw_body) : undefined;
}
