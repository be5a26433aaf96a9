import { Agent, request } from 'undici';
import { storableText } from '../channels/channel.js';
import { describeRefusal, guardedLookup, ipLiteral, type ResolveHost, refusedRange } from '../net/address-guard.js';
import { truncate } from '../text/truncate.js';

/** A receiver that has not answered within this long has failed the attempt (docs/outbound-webhooks.md). */
export const ATTEMPT_TIMEOUT_MS = 10_000;
/** How much of a failing receiver's answer an attempt keeps, for its owner to read. */
const ANSWER_EXCERPT_CHARS = 200;

export interface AttemptResult {
  statusCode: number | null;
  durationMs: number;
  /** Null on success; otherwise what went wrong, as the delivery log shows it. */
  error: string | null;
  /** `gone`: the receiver answered 410 and the endpoint is to be disabled. */
  outcome: 'succeeded' | 'failed' | 'gone';
}

/**
 * The HTTP side of outbound webhooks: one connection pool for every endpoint, whose sockets
 * connect only to addresses the guard checked (unless private addresses are allowed). Kept
 * alive connections are reused; a new connection resolves the name again and checks it again.
 */
export class WebhookSender {
  private readonly agent: Agent;

  constructor(private readonly options: { allowPrivate: boolean; resolve: ResolveHost; userAgent: string; timeoutMs?: number }) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(options.resolve, options.allowPrivate), timeout: options.timeoutMs ?? ATTEMPT_TIMEOUT_MS },
      keepAliveTimeout: 4_000,
    });
  }

  /**
   * POSTs one signed body. Success is a 2xx within the deadline; a redirect is not followed
   * and fails like any other answer; 410 Gone says the endpoint is gone.
   */
  async post(url: string, headers: Record<string, string>, body: string): Promise<AttemptResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    const timeoutMs = this.options.timeoutMs ?? ATTEMPT_TIMEOUT_MS;
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return { statusCode: null, durationMs: 0, error: 'the endpoint URL does not parse', outcome: 'failed' };
    }
    // A literal address is never looked up, so the guard checks it here.
    const literal = ipLiteral(target);
    const range = literal && !this.options.allowPrivate ? refusedRange(literal) : undefined;
    if (literal && range)
      return { statusCode: null, durationMs: 0, error: `refused: ${describeRefusal(literal, literal, range)}`, outcome: 'failed' };

    try {
      const res = await request(target, {
        method: 'POST',
        headers,
        body,
        dispatcher: this.agent,
        signal: AbortSignal.timeout(timeoutMs),
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const status = res.statusCode;
      if (status >= 200 && status < 300) {
        await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
        return { statusCode: status, durationMs: elapsed(), error: null, outcome: 'succeeded' };
      }
      const excerpt = await readExcerpt(res.body);
      const redirect =
        status >= 300 && status < 400 ? ` (a redirect to ${truncate(String(res.headers.location ?? ''), 200)}, not followed)` : '';
      return {
        statusCode: status,
        durationMs: elapsed(),
        error: `HTTP ${status}${redirect}${excerpt ? `: ${excerpt}` : ''}`,
        outcome: status === 410 ? 'gone' : 'failed',
      };
    } catch (err) {
      return { statusCode: null, durationMs: elapsed(), error: describeError(err, timeoutMs), outcome: 'failed' };
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => {});
  }
}

async function readExcerpt(body: AsyncIterable<Buffer> & { destroy(): void }): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= 1024) break;
    }
  } catch {
    // An answer that breaks off still has its status.
  } finally {
    body.destroy();
  }
  // A NUL, which Postgres text cannot hold, would fail the commit of every outcome recorded with it.
  const text = storableText(Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim());
  return text.length > ANSWER_EXCERPT_CHARS ? `${truncate(text, ANSWER_EXCERPT_CHARS - 1)}…` : text;
}

function describeError(err: unknown, timeoutMs: number): string {
  const e = err as { name?: string; code?: string; message?: string; cause?: { code?: string; message?: string } };
  if (
    e.name === 'TimeoutError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  ) {
    return `no answer within ${timeoutMs / 1000} s`;
  }
  if (e.code === 'ERR_REFUSED_ADDRESS') return e.message ?? 'refused address';
  const code = e.code ?? e.cause?.code;
  const message = e.message ?? e.cause?.message ?? String(err);
  return storableText(truncate(code && !message.includes(code) ? `${code}: ${message}` : message, 500));
}
