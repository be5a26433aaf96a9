import { Agent, request } from 'undici';
import { describeRefusal, guardedLookup, ipLiteral, type ResolveHost, refusedRange } from '../net/address-guard.js';

/** Redirects a download follows at most, each hop checked by the address guard like the first. */
export const MAX_REDIRECTS = 3;

/**
 * Why a download did not happen. `retry` false: trying again cannot help (a refused address,
 * too many redirects, a file over the limit); true: the provider or the network may do better
 * later (404 before a CDN has the file, 5xx, a timeout).
 */
export class MediaFetchError extends Error {
  constructor(
    message: string,
    readonly retry: boolean,
  ) {
    super(message);
    this.name = 'MediaFetchError';
  }
}

/** An answer being read: its body, streamed, and what it says it is. */
export interface OpenedDownload {
  body: AsyncIterable<Uint8Array> & { destroy(): void };
  /** The answer's content-type, parameters cut. */
  contentType?: string;
}

export interface MediaClientOptions {
  allowPrivate: boolean;
  resolve: ResolveHost;
  /** Connecting, the answer's headers, and every pause between two pieces of its body. */
  timeoutMs: number;
  maxBytes: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
/**
 * Answers worth another try: 404 (a CDN that does not have the file yet), 408, 429 and 5xx.
 * Any other refusal (401, 403, 400 "file is too big") will answer the same next time.
 */
const RETRYABLE = (status: number) => status === 404 || status === 408 || status === 429 || status >= 500;
/** A JSON answer (WhatsApp's media description) is read up to this size. */
const JSON_MAX_BYTES = 64 * 1024;

/**
 * Downloads media through the outbound webhooks' address guard (docs/attachments.md): every
 * connection goes to an address the guard checked, redirects are followed by hand, at most
 * MAX_REDIRECTS, each hop checked again, and the credentials in `headers` go only to the
 * origin they were given for: a redirect elsewhere (a CDN) is followed without them.
 */
export class MediaClient {
  private readonly agent: Agent;

  constructor(private readonly options: MediaClientOptions) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(options.resolve, options.allowPrivate), timeout: options.timeoutMs },
      keepAliveTimeout: 4_000,
    });
  }

  /** GETs `url` and reads its JSON answer (a small one). */
  async getJson(url: string, headers: Record<string, string>): Promise<unknown> {
    const opened = await this.open(url, { ...headers, accept: 'application/json' }, JSON_MAX_BYTES);
    const chunks: Uint8Array[] = [];
    let size = 0;
    for await (const chunk of opened.body) {
      size += chunk.byteLength;
      if (size > JSON_MAX_BYTES) {
        opened.body.destroy();
        throw new MediaFetchError('the media description is larger than expected', false);
      }
      chunks.push(chunk);
    }
    try {
      return JSON.parse(Buffer.concat(chunks).toString('utf8'));
    } catch {
      throw new MediaFetchError('the media description is not JSON', true);
    }
  }

  /**
   * GETs `url`, following redirects, and answers the body of its 2xx answer unread. An answer
   * whose content-length is over `maxBytes` is refused before a byte of it is read.
   */
  async open(url: string, headers: Record<string, string>, maxBytes = this.options.maxBytes): Promise<OpenedDownload> {
    let target = parse(url);
    const origin = target.origin;
    for (let hop = 0; ; hop++) {
      this.checkLiteral(target);
      const res = await request(target, {
        method: 'GET',
        // Credentials only to the origin they were given for.
        headers: target.origin === origin ? headers : withoutCredentials(headers),
        dispatcher: this.agent,
        headersTimeout: this.options.timeoutMs,
        bodyTimeout: this.options.timeoutMs,
      }).catch((err: unknown) => {
        throw new MediaFetchError(describeError(err, target.host, this.options.timeoutMs), !isRefusal(err));
      });
      // Reading stops early on purpose (a redirect, an error, the limit): a body destroyed
      // then is no error of its own, and a read in progress still sees it through its iterator.
      res.body.on('error', () => {});
      const status = res.statusCode;
      if (REDIRECTS.has(status)) {
        res.body.destroy();
        const location = res.headers.location;
        if (typeof location !== 'string') throw new MediaFetchError(`${target.host} answered HTTP ${status} without a location`, true);
        if (hop >= MAX_REDIRECTS) throw new MediaFetchError(`more than ${MAX_REDIRECTS} redirects`, false);
        target = parse(new URL(location, target).toString());
        continue;
      }
      if (status < 200 || status >= 300) {
        res.body.destroy();
        throw new MediaFetchError(`${target.host} answered HTTP ${status}`, RETRYABLE(status));
      }
      const length = Number(res.headers['content-length']);
      if (Number.isFinite(length) && length > maxBytes) {
        res.body.destroy();
        throw new MediaFetchError(`too large: ${length} bytes`, false);
      }
      const type = res.headers['content-type'];
      const contentType = typeof type === 'string' ? type.split(';')[0]!.trim().toLowerCase() : undefined;
      return { body: res.body, ...(contentType ? { contentType } : {}) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => {});
  }

  /** A literal address is never looked up, so the guard checks it here. */
  private checkLiteral(target: URL): void {
    const literal = ipLiteral(target);
    const range = literal && !this.options.allowPrivate ? refusedRange(literal) : undefined;
    if (literal && range) throw new MediaFetchError(`refused: ${describeRefusal(literal, literal, range)}`, false);
  }
}

function parse(url: string): URL {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    throw new MediaFetchError('the media URL does not parse', false);
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:') throw new MediaFetchError('the media URL is not http(s)', false);
  return target;
}

const CREDENTIAL_HEADERS = new Set(['authorization', 'x-api-key', 'cookie']);

function withoutCredentials(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !CREDENTIAL_HEADERS.has(name.toLowerCase())));
}

function isRefusal(err: unknown): boolean {
  const e = err as { code?: string; cause?: { code?: string } };
  return e.code === 'ERR_REFUSED_ADDRESS' || e.cause?.code === 'ERR_REFUSED_ADDRESS';
}

/** What went wrong, naming the host only: a media URL's query may itself be a grant. */
function describeError(err: unknown, host: string, timeoutMs: number): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (isRefusal(err)) return (e.code === 'ERR_REFUSED_ADDRESS' ? e.message : e.cause?.message) ?? 'refused address';
  if (e.code === 'UND_ERR_HEADERS_TIMEOUT' || e.code === 'UND_ERR_BODY_TIMEOUT' || e.code === 'UND_ERR_CONNECT_TIMEOUT') {
    return `${host} did not answer within ${timeoutMs / 1000} s`;
  }
  return `network error reaching ${host}: ${e.code ?? e.cause?.code ?? 'unknown'}`;
}
