import { Agent, request } from 'undici';
import { storableText } from '../channels/channel.js';
import { describeRefusal, guardedLookup, ipLiteral, type ResolveHost, refusedRange } from '../net/address-guard.js';
import type { AiEndpoint } from './ai-settings.js';

/** A call to the model that has not finished within this long fails (502 `ai_unavailable`). */
export const AI_TIMEOUT_MS = 30_000;
/** The most of an answer read: a model's reply to these prompts is a few kilobytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant';
  content: string;
}

/**
 * Why a call failed, as the caller may tell it: `outcome` labels the metric, `message` is safe
 * to answer (a status, a timeout, a refused address), never the provider's words.
 */
export class AiCallError extends Error {
  constructor(
    readonly outcome: 'timeout' | 'refused' | 'error' | `http_${number}`,
    message: string,
  ) {
    super(message);
    this.name = 'AiCallError';
  }
}

/**
 * The one HTTP client of AI assist: `POST <baseUrl>/chat/completions` on any OpenAI-compatible
 * server, over sockets that connect only to addresses the guard checked (unless
 * INBOX_ALLOW_PRIVATE_AI). Plain undici rather than the `openai` package: the guard has to own
 * the connection's lookup, the service needs one route of the API, and an error must never
 * carry the provider's body, which an SDK puts in its messages.
 */
export class AiClient {
  private readonly agent: Agent;

  constructor(private readonly options: { allowPrivate: boolean; resolve: ResolveHost; timeoutMs?: number }) {
    this.agent = new Agent({
      connect: { lookup: guardedLookup(options.resolve, options.allowPrivate), timeout: options.timeoutMs ?? AI_TIMEOUT_MS },
      keepAliveTimeout: 4_000,
    });
  }

  /**
   * The model's text for `messages`. Asks for a stream when `onDelta` is given and reads
   * either answer form (a server may ignore `stream`): JSON, or server-sent events whose
   * deltas reach `onDelta` as they come. Throws AiCallError.
   */
  async complete(endpoint: AiEndpoint, messages: ChatMessage[], options: { maxTokens: number; onDelta?: (text: string) => void }) {
    const timeoutMs = this.options.timeoutMs ?? AI_TIMEOUT_MS;
    const target = new URL(`${endpoint.baseUrl}/chat/completions`);
    const literal = ipLiteral(target);
    const range = literal && !this.options.allowPrivate ? refusedRange(literal) : undefined;
    if (literal && range) throw new AiCallError('refused', `refused: ${describeRefusal(literal, literal, range)}`);
    const signal = AbortSignal.timeout(timeoutMs);
    try {
      const res = await request(target, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: options.onDelta ? 'text/event-stream, application/json' : 'application/json',
          ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}),
        },
        body: JSON.stringify({
          model: endpoint.model,
          messages,
          max_tokens: options.maxTokens,
          temperature: 0.3,
          stream: options.onDelta !== undefined,
        }),
        dispatcher: this.agent,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      if (res.statusCode < 200 || res.statusCode >= 300) {
        // Read and dropped: the provider's words never reach an error.
        await res.body.dump({ limit: 64 * 1024 }).catch(() => {});
        throw new AiCallError(`http_${res.statusCode}`, `HTTP ${res.statusCode}`);
      }
      const type = String(res.headers['content-type'] ?? '');
      const text = type.includes('text/event-stream') ? await readStream(res.body, options.onDelta) : await readJson(res.body);
      if (text.trim() === '') throw new AiCallError('error', 'an empty answer');
      // A NUL, which no text column holds, as U+FFFD: a model's odd character is no 400 of the caller's.
      return storableText(text.trim());
    } catch (err) {
      throw asCallError(err, timeoutMs);
    }
  }

  async close(): Promise<void> {
    await this.agent.close().catch(() => {});
  }
}

async function readCapped(body: AsyncIterable<Buffer>, each?: (chunk: string) => void): Promise<string> {
  let size = 0;
  const chunks: string[] = [];
  const decoder = new TextDecoder();
  for await (const chunk of body) {
    size += chunk.length;
    if (size > MAX_ANSWER_BYTES) throw new AiCallError('error', `an answer larger than ${MAX_ANSWER_BYTES} bytes`);
    const text = decoder.decode(chunk, { stream: true });
    if (each) each(text);
    else chunks.push(text);
  }
  return chunks.join('') + decoder.decode();
}

async function readJson(body: AsyncIterable<Buffer>): Promise<string> {
  // `null` is JSON too: an answer of it is malformed, not an unreachable endpoint.
  let parsed: { choices?: { message?: { content?: unknown } }[] } | null;
  try {
    parsed = JSON.parse(await readCapped(body));
  } catch (err) {
    if (err instanceof AiCallError) throw err;
    throw new AiCallError('error', 'an answer that is not JSON');
  }
  const content = parsed?.choices?.[0]?.message?.content;
  if (typeof content !== 'string') throw new AiCallError('error', 'an answer without choices[0].message.content');
  return content;
}

/** Server-sent events of `chat.completion.chunk`s: each `data:` line's delta, until `[DONE]`. */
async function readStream(body: AsyncIterable<Buffer>, onDelta: ((text: string) => void) | undefined): Promise<string> {
  let pending = '';
  let text = '';
  const line = (raw: string) => {
    const l = raw.trim();
    if (!l.startsWith('data:')) return;
    const data = l.slice(5).trim();
    if (data === '[DONE]' || data === '') return;
    let chunk: { choices?: { delta?: { content?: unknown } }[] } | null;
    try {
      chunk = JSON.parse(data);
    } catch {
      throw new AiCallError('error', 'a stream event that is not JSON');
    }
    const delta = chunk?.choices?.[0]?.delta?.content;
    if (typeof delta === 'string' && delta !== '') {
      text += delta;
      onDelta?.(storableText(delta));
    }
  };
  await readCapped(body, (chunk) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const l of lines) line(l);
  });
  line(pending);
  return text;
}

function asCallError(err: unknown, timeoutMs: number): AiCallError {
  if (err instanceof AiCallError) return err;
  const e = err as { name?: string; code?: string; message?: string };
  if (
    e.name === 'TimeoutError' ||
    e.name === 'AbortError' ||
    e.code === 'UND_ERR_HEADERS_TIMEOUT' ||
    e.code === 'UND_ERR_BODY_TIMEOUT' ||
    e.code === 'UND_ERR_CONNECT_TIMEOUT'
  )
    return new AiCallError('timeout', `no answer within ${timeoutMs / 1000} s`);
  if (e.code === 'ERR_REFUSED_ADDRESS') return new AiCallError('refused', e.message ?? 'refused address');
  // Connection errors name a code (ECONNREFUSED, ENOTFOUND), never anything the provider said.
  return new AiCallError('error', `could not reach the endpoint${e.code ? ` (${e.code})` : ''}`);
}
