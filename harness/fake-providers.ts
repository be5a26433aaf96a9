import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';
import { createFakeMedia, type FakeMedia } from './fake-media.js';

/**
 * One HTTP server that answers every provider's send endpoint the way its public docs show.
 * Each provider lives under its own prefix, so one port serves them all:
 *
 *   whatsapp, social_*  {url}/graph/v23.0   (/{phone_number_id}/messages, /{phone_number_id}/media,
 *                                            /me/messages, GET /{waba_id}/message_templates: two pages)
 *   aggregator          {url}/aggregator     (/messages)
 *   whatsapp_session    {url}/waha           (/api/sendText, /api/sendFile)
 *   sms                 {url}/twilio         (/2010-04-01/Accounts/{sid}/Messages.json)
 *   telegram            {url}/telegram       (/bot{token}/sendMessage, sendPhoto, sendAudio, sendVideo,
 *                                            sendDocument, sendSticker, setWebhook)
 *
 * Every request is recorded; `behave(path, …)` makes one path answer otherwise. The providers'
 * media files (inbound attachments) are served by `media` (./fake-media.ts) on the same port.
 * Media are checked as the providers check them: a WhatsApp upload must be multipart with
 * `messaging_product=whatsapp`, `type` and `file` (kept in `uploads`, and a send must name an
 * uploaded id); a file sent by URL (Messenger's `payload.url`, WAHA's `file.url`, Twilio's
 * `MediaUrl`, Telegram's `photo`/`document`…) is fetched at once, as the provider would, and
 * the send is refused when that fetch does not answer 200. What was fetched is `fetched`.
 */
export interface RecordedRequest {
  method: string;
  path: string;
  /** The query string, without its `?`. */
  query: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body's exact bytes (a multipart upload is binary). */
  bytes: Buffer;
  /** The body parsed as JSON, as a form when it was form-encoded, or as a MultipartBody. */
  parsed: unknown;
  /** A file the provider fetched by the URL the send named. */
  fetched?: FetchedMedia;
  provider: Provider | undefined;
  /** What the fake answered; absent while it hangs. */
  response?: { status: number; body: unknown };
}

export interface MultipartBody {
  fields: Record<string, string>;
  files: { field: string; filename: string; contentType: string; bytes: Buffer }[];
}

export interface FetchedMedia {
  url: string;
  status: number;
  contentType: string | null;
  bytes: Buffer;
}

/** A file uploaded to WhatsApp's `/media`, by the id the upload answered. */
export interface UploadedMedia {
  type: string;
  filename: string;
  contentType: string;
  bytes: Buffer;
}

export type Provider = 'whatsapp' | 'social' | 'aggregator' | 'whatsapp_session' | 'sms' | 'telegram';

export type Behaviour =
  | 'ok'
  /** 400 with the provider's own error body. */
  | 'bad-request'
  /** 429 with `retry-after: 7`, or with the value given (seconds or an HTTP-date). */
  | 'rate-limited'
  | { rateLimited: string }
  | 'server-error'
  /** Never answers (until the server closes). */
  | 'hang'
  /** Answers as `answer` (default 'ok') once `heldUntil` settles: a send the test keeps in flight. */
  | { heldUntil: Promise<unknown>; answer?: Behaviour }
  /** Exactly this answer. */
  | { status: number; body?: unknown; headers?: Record<string, string> };

export interface FakeProviders {
  url: string;
  baseUrls: Record<Provider, string>;
  requests: RecordedRequest[];
  /** WhatsApp media uploads by media id. */
  uploads: Map<string, UploadedMedia>;
  behave(path: string, behaviour: Behaviour): void;
  /** Media files with each provider's authentication, for inbound attachments. */
  media: FakeMedia;
  /** Forgets requests and behaviours. */
  reset(): void;
  close(): Promise<void>;
}

export const GRAPH_PREFIX = '/graph/v23.0';

export async function startFakeProviders(
  options: { port?: number; host?: string; onRequest?: (r: RecordedRequest) => void } = {},
): Promise<FakeProviders> {
  const requests: RecordedRequest[] = [];
  const behaviours = new Map<string, Behaviour>();
  let url = '';
  const media = createFakeMedia(() => url);
  const uploads = new Map<string, UploadedMedia>();

  const server = createServer((req, res) => {
    if (media.handle(req, res)) return;
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', async () => {
      const bytes = Buffer.concat(chunks);
      const body = bytes.toString('utf8');
      const requested = new URL(req.url ?? '/', 'http://fake');
      const path = requested.pathname;
      const contentType = req.headers['content-type'];
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        path,
        query: requested.search.replace(/^\?/, ''),
        headers: req.headers,
        body,
        bytes,
        parsed: contentType?.startsWith('multipart/form-data') ? await parseMultipart(bytes, contentType) : parseBody(body, contentType),
        provider: providerOf(path),
      };
      const mediaUrl = mediaUrlOf(recorded);
      if (mediaUrl !== undefined) recorded.fetched = await fetchMedia(mediaUrl);
      requests.push(recorded);
      options.onRequest?.(recorded);
      const respond = (behaviour: Behaviour) => {
        if (typeof behaviour === 'object' && 'heldUntil' in behaviour) {
          void behaviour.heldUntil.then(() => respond(behaviour.answer ?? 'ok'));
          return;
        }
        const answered = answer(recorded, behaviour, uploads);
        if (answered === undefined) return; // hanging: closed with the server
        recorded.response = { status: answered.status, body: answered.body };
        const text = answered.body === undefined ? '' : typeof answered.body === 'string' ? answered.body : JSON.stringify(answered.body);
        res.writeHead(answered.status, {
          'content-type': typeof answered.body === 'string' ? 'text/plain' : 'application/json',
          ...answered.headers,
        });
        res.end(text);
      };
      respond(behaviours.get(path) ?? 'ok');
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  url = `http://${options.host ?? '127.0.0.1'}:${port}`;
  return {
    url,
    baseUrls: {
      whatsapp: `${url}${GRAPH_PREFIX}`,
      social: `${url}${GRAPH_PREFIX}`,
      aggregator: `${url}/aggregator`,
      whatsapp_session: `${url}/waha`,
      sms: `${url}/twilio`,
      telegram: `${url}/telegram`,
    },
    requests,
    media,
    uploads,
    behave: (path, behaviour) => void behaviours.set(path, behaviour),
    reset() {
      requests.length = 0;
      behaviours.clear();
      media.reset();
      uploads.clear();
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections(); // hanging requests included
        server.close(() => resolve());
      }),
  };
}

const MEDIA_PATH = new RegExp(`^${GRAPH_PREFIX.replaceAll('.', '\\.')}/[^/]+/media$`);
const TELEGRAM_FILE_FIELDS = ['photo', 'audio', 'video', 'document', 'sticker'] as const;

function providerOf(path: string): Provider | undefined {
  if (path === `${GRAPH_PREFIX}/me/messages`) return 'social';
  if (new RegExp(`^${GRAPH_PREFIX.replaceAll('.', '\\.')}/[^/]+/messages$`).test(path)) return 'whatsapp';
  if (MEDIA_PATH.test(path)) return 'whatsapp';
  if (path === '/aggregator/messages') return 'aggregator';
  if (path === '/waha/api/sendText' || path === '/waha/api/sendFile') return 'whatsapp_session';
  if (/^\/twilio\/2010-04-01\/Accounts\/[^/]+\/Messages\.json$/.test(path)) return 'sms';
  if (/^\/telegram\/bot[^/]+\/(sendMessage|sendPhoto|sendAudio|sendVideo|sendDocument|sendSticker|setWebhook)$/.test(path))
    return 'telegram';
  return undefined;
}

/** The URL of a file a send asks the provider to fetch, if it names one. */
function mediaUrlOf(req: RecordedRequest): string | undefined {
  const p = (req.parsed ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const obj = (v: unknown) => (typeof v === 'object' && v !== null ? (v as Record<string, unknown>) : {});
  switch (req.provider) {
    case 'social':
      return str(obj(obj(obj(p.message).attachment).payload).url);
    case 'whatsapp_session':
      return str(obj(p.file).url);
    case 'sms':
      return str(p.MediaUrl);
    case 'telegram':
      for (const field of TELEGRAM_FILE_FIELDS) if (str(p[field])) return str(p[field]);
      return undefined;
    default:
      return undefined;
  }
}

async function fetchMedia(url: string): Promise<FetchedMedia> {
  try {
    const res = await fetch(url, { redirect: 'manual', signal: AbortSignal.timeout(5_000) });
    return { url, status: res.status, contentType: res.headers.get('content-type'), bytes: Buffer.from(await res.arrayBuffer()) };
  } catch {
    return { url, status: 0, contentType: null, bytes: Buffer.alloc(0) };
  }
}

function parseMultipart(bytes: Buffer, contentType: string): Promise<MultipartBody | undefined> {
  return new Promise((resolve) => {
    const form: MultipartBody = { fields: {}, files: [] };
    let parser: ReturnType<typeof busboy>;
    try {
      parser = busboy({ headers: { 'content-type': contentType } });
    } catch {
      resolve(undefined);
      return;
    }
    parser.on('field', (name, value) => {
      form.fields[name] = value;
    });
    parser.on('file', (field, stream, info) => {
      const parts: Buffer[] = [];
      stream.on('data', (c: Buffer) => parts.push(c));
      stream.on('end', () =>
        form.files.push({ field, filename: info.filename ?? '', contentType: info.mimeType, bytes: Buffer.concat(parts) }),
      );
    });
    parser.on('error', () => resolve(undefined));
    parser.on('close', () => resolve(form));
    parser.end(bytes);
  });
}

/**
 * What the provider refuses about a file: a WhatsApp upload without its fields, a send naming
 * a media id never uploaded, a file its URL did not serve, or one larger than Telegram takes
 * that way. Undefined when nothing.
 */
function mediaProblem(req: RecordedRequest, uploads: Map<string, UploadedMedia>): string | undefined {
  if (req.provider === 'whatsapp' && MEDIA_PATH.test(req.path)) {
    const form = req.parsed as MultipartBody | undefined;
    if (!form || !Array.isArray(form.files)) return '(#100) The request must be multipart/form-data';
    if (form.fields.messaging_product !== 'whatsapp') return '(#100) The parameter messaging_product is required';
    if (!form.fields.type) return '(#100) The parameter type is required';
    const file = form.files.find((f) => f.field === 'file');
    if (!file) return '(#100) The parameter file is required';
    if (file.contentType !== form.fields.type)
      return `(#131053) Media upload error: type ${form.fields.type} is not the file's ${file.contentType}`;
    return undefined;
  }
  if (req.provider === 'whatsapp') {
    const p = (req.parsed ?? {}) as Record<string, unknown>;
    const type = typeof p.type === 'string' ? p.type : '';
    if (!['image', 'audio', 'video', 'document', 'sticker'].includes(type)) return undefined;
    const media = (p[type] ?? {}) as Record<string, unknown>;
    if (typeof media.id !== 'string' || !uploads.has(media.id)) return `(#131053) Media upload error: unknown media id ${String(media.id)}`;
    if ((type === 'audio' || type === 'sticker') && media.caption !== undefined) return `(#100) ${type} messages take no caption`;
    return undefined;
  }
  if (req.fetched && req.fetched.status !== 200) return `could not fetch the media at its URL (HTTP ${req.fetched.status})`;
  // The Bot API: "In sendDocument, sending by URL will currently only work for GIF, PDF and ZIP files."
  if (req.provider === 'telegram' && req.path.endsWith('/sendDocument') && req.fetched) {
    const type = req.fetched.contentType?.split(';')[0];
    if (!['image/gif', 'application/pdf', 'application/zip'].includes(type ?? '')) return 'Bad Request: wrong type of the web page content';
  }
  // The Bot API fetches photos up to 5 MB and other files up to 20 MB by URL; it takes photos up
  // to 10 MB as an upload (core.telegram.org/bots/api#sending-files).
  if (req.provider === 'telegram' && req.fetched) {
    const limit = req.path.endsWith('/sendPhoto') ? 5 * 1024 * 1024 : 20 * 1024 * 1024;
    if (req.fetched.bytes.length > limit) return 'Bad Request: failed to get HTTP URL content';
  }
  if (req.provider === 'telegram' && req.path.endsWith('/sendPhoto')) {
    const photo = (req.parsed as Partial<MultipartBody> | undefined)?.files?.[0];
    if (photo && photo.bytes.length > 10 * 1024 * 1024) return 'Bad Request: PHOTO_INVALID_DIMENSIONS';
  }
  if (req.provider === 'whatsapp_session' && req.path.endsWith('/sendFile')) {
    const file = ((req.parsed ?? {}) as Record<string, unknown>).file as Record<string, unknown> | undefined;
    if (!file || typeof file.mimetype !== 'string' || typeof file.filename !== 'string') return 'file must be {mimetype, filename, url}';
  }
  return undefined;
}

interface Answer {
  status: number;
  body?: unknown;
  headers?: Record<string, string>;
}

function answer(
  req: RecordedRequest,
  behaviour: Exclude<Behaviour, { heldUntil: Promise<unknown> }>,
  uploads: Map<string, UploadedMedia>,
): Answer | undefined {
  if (behaviour === 'hang') return undefined;
  if (typeof behaviour === 'object' && 'status' in behaviour) return behaviour;
  if (req.method === 'GET' && TEMPLATES_PATH.test(req.path))
    return behaviour === 'server-error'
      ? { status: 500, body: errorBody('whatsapp', 500, 'An unknown error occurred') }
      : templatePage(req);
  if (req.provider === 'whatsapp' && behaviour === 'ok') {
    const problem = templateSendProblem(req.parsed);
    if (problem) return { status: 400, body: errorBody('whatsapp', 400, `(#132000) ${problem}`) };
  }
  const read = req.method === 'GET' ? accountRead(req.path) : undefined;
  if (read) return { status: 200, body: read };
  if (req.method !== 'POST' || req.provider === undefined)
    return { status: 404, body: { error: { message: `no such endpoint: ${req.method} ${req.path}` } } };
  if (behaviour === 'rate-limited' || typeof behaviour === 'object') {
    const retryAfter = typeof behaviour === 'object' ? behaviour.rateLimited : '7';
    return { status: 429, body: errorBody(req.provider, 429, 'Too many requests'), headers: { 'retry-after': retryAfter } };
  }
  if (behaviour === 'server-error') return { status: 500, body: errorBody(req.provider, 500, 'Internal server error') };
  if (behaviour === 'bad-request') return { status: 400, body: errorBody(req.provider, 400, invalidRecipient(req.provider)) };
  const refused = (req.provider === 'social' ? metaSendProblem(req.parsed) : undefined) ?? mediaProblem(req, uploads);
  if (refused) return { status: 400, body: errorBody(req.provider, 400, refused) };
  if (req.provider === 'whatsapp' && MEDIA_PATH.test(req.path)) {
    const form = req.parsed as MultipartBody;
    const file = form.files.find((f) => f.field === 'file')!;
    const id = String(1_000_000_000_000_000n + BigInt(uploads.size + 1));
    uploads.set(id, { type: form.fields.type!, filename: file.filename, contentType: file.contentType, bytes: file.bytes });
    return { status: 200, body: { id } };
  }
  const [status, body] = success(req.provider, req.parsed, req.path);
  return { status, body };
}

/**
 * The Send API's own checks on how a message is tagged: `RESPONSE` (or `UPDATE`), or
 * `MESSAGE_TAG` with a tag it knows; anything else is refused as Meta refuses it.
 */
function metaSendProblem(parsed: unknown): string | undefined {
  const p = (parsed ?? {}) as Record<string, unknown>;
  if (p.messaging_type === 'RESPONSE' || p.messaging_type === 'UPDATE') {
    return p.tag === undefined ? undefined : '(#100) tag is only valid with messaging_type MESSAGE_TAG';
  }
  if (p.messaging_type === 'MESSAGE_TAG') {
    const tags = ['HUMAN_AGENT', 'CONFIRMED_EVENT_UPDATE', 'POST_PURCHASE_UPDATE', 'ACCOUNT_UPDATE'];
    return typeof p.tag === 'string' && tags.includes(p.tag) ? undefined : '(#100) Param tag must be one of {HUMAN_AGENT, ...}';
  }
  return '(#100) Param messaging_type must be one of {RESPONSE, UPDATE, MESSAGE_TAG}';
}

/**
 * The providers' cheapest authenticated reads, as a connection check calls them: Graph's phone
 * number or page, Twilio's account, Telegram's getMe, WAHA's session. Undefined for other paths.
 */
function accountRead(path: string): unknown {
  let m = new RegExp(`^${GRAPH_PREFIX.replaceAll('.', '\\.')}/([0-9]+)$`).exec(path);
  if (m) return { id: m[1], display_phone_number: '+1 555 078 3881', verified_name: 'Fake Business' };
  m = /^\/twilio\/2010-04-01\/Accounts\/([^/]+)\.json$/.exec(path);
  if (m) return { sid: m[1], friendly_name: 'Fake Twilio account', status: 'active' };
  m = /^\/telegram\/bot([0-9]+):[^/]+\/getMe$/.exec(path);
  if (m) return { ok: true, result: { id: Number(m[1]), is_bot: true, first_name: 'Fake bot', username: 'fake_inbox_bot' } };
  m = /^\/waha\/api\/sessions\/([^/]+)$/.exec(path);
  if (m) return { name: decodeURIComponent(m[1]!), status: 'WORKING' };
  return undefined;
}

const TEMPLATES_PATH = new RegExp(`^${GRAPH_PREFIX.replaceAll('.', '\\.')}/[^/]+/message_templates$`);

/** The templates every fake WABA lists, as Meta's Graph API shows them. */
export const FAKE_TEMPLATES = [
  {
    name: 'order_update',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    id: '1000000001',
    components: [
      { type: 'HEADER', format: 'TEXT', text: 'Order {{1}}' },
      { type: 'BODY', text: 'Hi {{1}}, your order {{2}} has shipped.' },
      { type: 'FOOTER', text: 'Reply STOP to opt out' },
    ],
  },
  {
    name: 'spring_sale',
    language: 'en_US',
    status: 'REJECTED',
    category: 'MARKETING',
    id: '1000000002',
    components: [{ type: 'BODY', text: 'Everything is 20% off, {{1}}!' }],
  },
  {
    name: 'welcome',
    language: 'en_US',
    status: 'APPROVED',
    category: 'UTILITY',
    id: '1000000003',
    components: [{ type: 'BODY', text: 'Welcome aboard.' }],
  },
];

/** Page one holds the first two templates and a `paging.next` with its `after` cursor; page two the rest. */
function templatePage(req: RecordedRequest): Answer {
  const after = new URLSearchParams(req.query).get('after');
  if (after === null) {
    const host = req.headers.host ?? '127.0.0.1';
    return {
      status: 200,
      body: {
        data: FAKE_TEMPLATES.slice(0, 2),
        paging: {
          cursors: { before: 'QVFIUmxB', after: 'QVFIUmxC' },
          next: `http://${host}${req.path}?limit=100&after=QVFIUmxC`,
        },
      },
    };
  }
  if (after !== 'QVFIUmxC') return { status: 400, body: errorBody('whatsapp', 400, 'Invalid cursor') };
  return { status: 200, body: { data: FAKE_TEMPLATES.slice(2), paging: { cursors: { before: 'QVFIUmxD', after: 'QVFIUmxD' } } } };
}

/** What is wrong with a template send's JSON, as Cloud API's reference requires it; undefined when nothing. */
function templateSendProblem(parsed: unknown): string | undefined {
  const p = (parsed ?? {}) as Record<string, unknown>;
  if (p.type !== 'template') return undefined;
  const t = p.template as Record<string, unknown> | undefined;
  if (!t || typeof t.name !== 'string') return 'template.name is required';
  const language = t.language as Record<string, unknown> | undefined;
  if (!language || typeof language.code !== 'string' || Object.keys(language).length !== 1) return 'template.language must be {code}';
  if (!Array.isArray(t.components)) return 'template.components must be a list';
  for (const c of t.components as Record<string, unknown>[]) {
    if (c.type !== 'header' && c.type !== 'body') return `component type ${String(c.type)} is not header or body`;
    if (!Array.isArray(c.parameters) || c.parameters.length === 0) return `${c.type} parameters must be a non-empty list`;
    for (const x of c.parameters as Record<string, unknown>[])
      if (x.type !== 'text' || typeof x.text !== 'string' || Object.keys(x).length !== 2) return 'a parameter must be {type: "text", text}';
  }
  if (Object.keys(t).some((k) => !['name', 'language', 'components'].includes(k))) return 'unknown template field';
  return undefined;
}

/** Success bodies as the providers document them. */
function success(provider: Provider, parsed: unknown, path: string): [number, unknown] {
  let p = (parsed ?? {}) as Record<string, unknown>;
  switch (provider) {
    case 'whatsapp':
      return [
        200,
        {
          messaging_product: 'whatsapp',
          contacts: [{ input: p.to, wa_id: p.to }],
          messages: [{ id: `wamid.${randomBytes(24).toString('base64url')}` }],
        },
      ];
    case 'social':
      return [
        200,
        {
          recipient_id: (p.recipient as Record<string, unknown> | undefined)?.id,
          message_id: `m_${randomBytes(30).toString('base64url')}`,
        },
      ];
    case 'aggregator':
      return [201, { id: `agg-out-${randomUUID()}`, status: 'queued' }];
    case 'whatsapp_session': {
      const id = randomBytes(10).toString('hex').toUpperCase();
      return [
        201,
        { id: { fromMe: true, remote: p.chatId, id, _serialized: `true_${String(p.chatId)}_${id}` }, body: p.text, fromMe: true, ack: 0 },
      ];
    }
    case 'sms': {
      const accountSid = path.split('/')[4];
      return [
        201,
        {
          sid: `SM${randomBytes(16).toString('hex')}`,
          account_sid: accountSid,
          to: p.To,
          from: p.From,
          body: p.Body,
          status: 'queued',
          direction: 'outbound-api',
          num_segments: '1',
          api_version: '2010-04-01',
        },
      ];
    }
    case 'telegram': {
      if (path.endsWith('/setWebhook')) return [200, { ok: true, result: true, description: 'Webhook was set' }];
      // An upload (multipart) carries chat_id and caption as fields beside the file.
      const fields = (p as Partial<MultipartBody>).fields;
      if (fields) p = { ...p, ...fields };
      const bot = Number(path.split('/')[2]?.replace(/^bot/, '').split(':')[0]);
      return [
        200,
        {
          ok: true,
          result: {
            message_id: nextTelegramMessageId++,
            from: { id: bot, is_bot: true, first_name: 'Inbox Bot', username: 'inbox_test_bot' },
            chat: { id: Number(p.chat_id), type: 'private' },
            date: Math.floor(Date.now() / 1000),
            ...(typeof p.text === 'string' ? { text: p.text } : {}),
          },
        },
      ];
    }
  }
}

/** Telegram numbers a chat's messages; one counter is enough for a fake. */
let nextTelegramMessageId = 1000;

function invalidRecipient(provider: Provider): string {
  switch (provider) {
    case 'whatsapp':
      return '(#131030) Recipient phone number not in allowed list';
    case 'social':
      return '(#100) No matching user found';
    case 'aggregator':
      return 'Recipient is not reachable on this account';
    case 'whatsapp_session':
      return 'chatId must be a valid WhatsApp id';
    case 'sms':
      return "The 'To' number is not a valid phone number.";
    case 'telegram':
      return 'Bad Request: chat not found';
  }
}

/** Error bodies in each provider's own shape. */
function errorBody(provider: Provider, status: number, message: string): unknown {
  switch (provider) {
    case 'whatsapp':
    case 'social':
      return { error: { message, type: 'OAuthException', code: status === 400 ? 100 : 2, fbtrace_id: 'AbCdEf123' } };
    case 'aggregator':
      return { error: { code: status === 400 ? 'invalid_recipient' : 'unavailable', message } };
    case 'whatsapp_session':
      return { statusCode: status, message: status === 400 ? [message] : message, error: status === 400 ? 'Bad Request' : 'Error' };
    case 'sms':
      return { code: status === 400 ? 21211 : 20500, message, more_info: 'https://www.twilio.com/docs/errors/21211', status };
    case 'telegram':
      return { ok: false, error_code: status, description: message };
  }
}

function parseBody(body: string, contentType: string | undefined): unknown {
  if (contentType?.startsWith('application/x-www-form-urlencoded')) return Object.fromEntries(new URLSearchParams(body));
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
