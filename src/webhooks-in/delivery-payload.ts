import { parseBody } from '../channels/channel.js';
import { adapterFor } from '../channels/index.js';
import type { InboxRow } from './inbox.queries.js';

/**
 * A stored delivery's payloadJson (docs/api.md): the payload_json column when verification
 * stored one, otherwise the raw body as its adapter parses it, which is what ingestion
 * would have stored (see storedPayloadText). Undefined when the body does not parse.
 */
export function deliveryPayload(row: Pick<InboxRow, 'integration_key' | 'raw_body' | 'payload_json'>): unknown {
  if (row.payload_json !== null && row.payload_json !== undefined) return row.payload_json;
  const adapter = adapterFor(row.integration_key);
  return adapter ? parseBody(adapter, row.raw_body) : undefined;
}
