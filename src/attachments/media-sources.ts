import type { SendCredentials } from '../channels/channel.js';
import { apiUrl, META_GRAPH_API } from '../channels/provider-http.js';
import { TELEGRAM_API } from '../channels/telegram.js';
import { deliveryFile, type StoredDelivery } from './delivery-files.js';
import type { StoredSource } from './fetch-media.queries.js';
import { type MediaClient, MediaFetchError, type OpenedDownload } from './media-download.js';

/** Twilio's API host, where its media URLs point unless apiBaseUrl says otherwise. */
const TWILIO_API = 'https://api.twilio.com';

export interface MediaContext {
  client: MediaClient;
  integrationKey: string;
  credentials: SendCredentials;
  maxBytes: number;
  /** The message's provider id: which mail of a delivery holds a `delivery` file. */
  messageExternalId: string;
  /** A stored delivery (its text, and its exact bytes when kept), for `delivery` files. */
  deliveryBody(deliveryId: string): Promise<StoredDelivery | undefined>;
}

/**
 * Opens the bytes of an inbound attachment wherever its source says they are (docs/attachments.md,
 * "Inbound"): WhatsApp's media id (a description, then its URL, both with the Bearer token), a
 * URL (with the provider's credentials when `auth` asks, and only on the provider's own API
 * host), or a file inside the stored delivery.
 */
export async function openMedia(source: StoredSource, ctx: MediaContext): Promise<OpenedDownload> {
  const { credentials } = ctx;
  switch (source.from) {
    case 'whatsapp_media': {
      const token = need(credentials.accessToken, ctx.integrationKey, 'accessToken');
      const auth = { authorization: `Bearer ${token}` };
      const info = await ctx.client.getJson(
        apiUrl(credentials.apiBaseUrl ?? META_GRAPH_API, `/${encodeURIComponent(source.mediaId)}`),
        auth,
      );
      const { url, file_size: size } = (info ?? {}) as { url?: unknown; file_size?: unknown };
      if (typeof url !== 'string') throw new MediaFetchError('the media description has no url', true);
      if (typeof size === 'number' && size > ctx.maxBytes) throw new MediaFetchError(`too large: ${size} bytes`, false);
      // The download URL is on Meta's CDN and takes the same token.
      return ctx.client.open(url, auth);
    }
    case 'url': {
      if (source.auth === 'none') return ctx.client.open(source.url, {});
      const host = credentials.apiBaseUrl ?? (source.auth === 'basic' ? TWILIO_API : undefined);
      // A delivery names the URL; the provider's credentials go to the provider's host and nowhere else.
      if (!host || originOf(source.url) !== originOf(host)) {
        throw new MediaFetchError(
          `the media URL is not on ${ctx.integrationKey}'s API host (apiBaseUrl): its credentials are not sent elsewhere`,
          false,
        );
      }
      const token = need(credentials.accessToken, ctx.integrationKey, 'accessToken');
      if (source.auth === 'api_key') return ctx.client.open(source.url, { 'x-api-key': token });
      if (source.auth === 'bearer') return ctx.client.open(source.url, { authorization: `Bearer ${token}` });
      const user = need(credentials.accountSid, ctx.integrationKey, 'accountSid');
      return ctx.client.open(source.url, { authorization: `Basic ${Buffer.from(`${user}:${token}`).toString('base64')}` });
    }
    case 'telegram_file': {
      // The token is part of these URLs; error texts name the host only.
      const token = need(credentials.accessToken, ctx.integrationKey, 'accessToken');
      const base = credentials.apiBaseUrl ?? TELEGRAM_API;
      const info = await ctx.client.getJson(apiUrl(base, `/bot${token}/getFile?file_id=${encodeURIComponent(source.fileId)}`), {});
      const result = (info as { result?: { file_path?: unknown; file_size?: unknown } } | undefined)?.result;
      if (typeof result?.file_path !== 'string') throw new MediaFetchError('getFile answered without a file_path', true);
      if (typeof result.file_size === 'number' && result.file_size > ctx.maxBytes) {
        throw new MediaFetchError(`too large: ${result.file_size} bytes`, false);
      }
      return ctx.client.open(apiUrl(base, `/file/bot${token}/${result.file_path}`), {});
    }
    case 'delivery': {
      const body = source.deliveryId === undefined ? undefined : await ctx.deliveryBody(source.deliveryId);
      if (body === undefined) throw new MediaFetchError('the delivery that carried the file is no longer stored', false);
      const bytes = await deliveryFile(ctx.integrationKey, body, ctx.messageExternalId, source.index);
      if (bytes.byteLength > ctx.maxBytes) throw new MediaFetchError(`too large: ${bytes.byteLength} bytes`, false);
      return { body: Object.assign(oneChunk(bytes), { destroy() {} }) };
    }
  }
}

async function* oneChunk(bytes: Buffer): AsyncGenerator<Uint8Array> {
  yield bytes;
}

function need(value: string | undefined, key: string, field: string): string {
  if (!value) {
    throw new MediaFetchError(
      `the ${key} connection has no credentials (${field} missing): set them with PATCH /v1/connections/:id or in INBOX_INTEGRATIONS`,
      false,
    );
  }
  return value;
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}
