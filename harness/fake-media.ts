import { createHash, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';

/**
 * The media side of the fake providers: each provider's files, served with that provider's
 * own authentication, as its docs show:
 *
 *   WhatsApp Cloud  GET {graph}/{media id} (Bearer) → { url, mime_type, sha256, file_size, id },
 *                   then GET url (Bearer) on a CDN path: /whatsapp-cdn/{media id}
 *   Meta CDN        GET /meta-cdn/{id} (no credentials: the URL is the grant)
 *   WAHA            GET /waha/api/files/{session}/{id}.{ext} (X-Api-Key)
 *   Twilio          GET /twilio/2010-04-01/Accounts/{sid}/Messages/{MM}/Media/{ME} (basic auth)
 *   Telegram        GET /telegram/bot{token}/getFile?file_id=… → { ok, result: { file_path, file_size } },
 *                   then GET /telegram/file/bot{token}/{file_path}
 *
 * A file may answer otherwise (404, 500, hang, a redirect) and its bytes may be made on the fly
 * (a large file is never held whole); the fake counts the bytes it managed to hand to the
 * socket, so a test can see that a download stopped where it should.
 */
export interface MediaFile {
  /** The bytes, or a size for bytes made on the fly (a repeated pattern). */
  bytes: Buffer | { size: number };
  contentType: string;
  /** Send `content-length` (default true); false streams the body chunked. */
  contentLength?: boolean;
  behaviour?: MediaBehaviour;
}

export type MediaBehaviour = 'ok' | 'not-found' | 'server-error' | 'hang' | { redirect: string };

export interface ServedFile {
  /** Where the file is: the URL a delivery names (the CDN URL for WhatsApp). */
  url: string;
  /** WhatsApp Cloud's media id, for WhatsApp files. */
  mediaId?: string;
  /** Telegram's file_id, for Telegram files. */
  fileId?: string;
}

export interface MediaRequest {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  status: number;
}

export interface FakeMedia {
  whatsapp(file: MediaFile, auth: { token: string }): ServedFile;
  meta(file: MediaFile): ServedFile;
  waha(file: MediaFile, auth: { session: string; apiKey: string }): ServedFile;
  twilio(file: MediaFile, auth: { accountSid: string; authToken: string }): ServedFile;
  telegram(file: MediaFile, auth: { token: string }): ServedFile;
  /** Makes the file at this URL (or media id) answer otherwise from now on. */
  behave(urlOrMediaId: string, behaviour: MediaBehaviour): void;
  /** Bytes of the file at `url` handed to the socket so far, over every request for it. */
  sent(url: string): number;
  requests: MediaRequest[];
  /** Answers a media request; false when the request is not for a file of this fake. */
  handle(req: IncomingMessage, res: ServerResponse): boolean;
  /** Forgets requests and breaks off the answers still hanging. */
  reset(): void;
}

interface Entry {
  file: MediaFile;
  /** Headers one of which must match; none: no credentials. */
  accepts: (headers: IncomingMessage['headers']) => boolean;
  sent: number;
  mediaId?: string;
  /** Telegram: the file_id and the bot token that may read it. */
  telegram?: { fileId: string; token: string; path: string };
}

const CHUNK = 64 * 1024;

export function createFakeMedia(baseUrl: () => string): FakeMedia {
  const byPath = new Map<string, Entry>();
  const byMediaId = new Map<string, Entry>();
  const byFileId = new Map<string, Entry>();
  const requests: MediaRequest[] = [];
  const hanging = new Set<ServerResponse>();
  const pathOf = (url: string) => new URL(url, baseUrl()).pathname;
  const add = (path: string, entry: Entry): ServedFile => {
    byPath.set(path, entry);
    return { url: `${baseUrl()}${path}`, ...(entry.mediaId ? { mediaId: entry.mediaId } : {}) };
  };
  const id = () => randomBytes(8).toString('hex');

  return {
    requests,
    whatsapp(file, { token }) {
      const mediaId = String(BigInt(`0x${randomBytes(6).toString('hex')}`));
      const entry: Entry = { file, accepts: (h) => h.authorization === `Bearer ${token}`, sent: 0, mediaId };
      byMediaId.set(mediaId, entry);
      return add(`/whatsapp-cdn/${mediaId}`, entry);
    },
    meta: (file) => add(`/meta-cdn/${id()}`, { file, accepts: () => true, sent: 0 }),
    waha(file, { session, apiKey }) {
      const ext = file.contentType.split('/')[1] ?? 'bin';
      return add(`/waha/api/files/${session}/false_${id()}.${ext}`, { file, accepts: (h) => h['x-api-key'] === apiKey, sent: 0 });
    },
    twilio(file, { accountSid, authToken }) {
      const basic = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString('base64')}`;
      const path = `/twilio/2010-04-01/Accounts/${accountSid}/Messages/MM${id()}${id()}/Media/ME${id()}${id()}`;
      return add(path, { file, accepts: (h) => h.authorization === basic, sent: 0 });
    },
    telegram(file, { token }) {
      const fileId = `BQACAgIAAxkBAAI${id()}`;
      const path = `documents/file_${id()}.${file.contentType.split('/')[1] ?? 'bin'}`;
      const entry: Entry = { file, accepts: () => true, sent: 0, telegram: { fileId, token, path } };
      byFileId.set(fileId, entry);
      return { ...add(`/telegram/file/bot${token}/${path}`, entry), fileId };
    },
    behave(urlOrMediaId, behaviour) {
      const entry = byMediaId.get(urlOrMediaId) ?? byPath.get(pathOf(urlOrMediaId));
      if (!entry) throw new Error(`no fake media file ${urlOrMediaId}`);
      entry.file.behaviour = behaviour;
    },
    sent: (url) => byPath.get(pathOf(url))?.sent ?? 0,
    reset() {
      requests.length = 0;
      for (const res of hanging) res.destroy();
      hanging.clear();
    },
    handle(req, res) {
      if (req.method !== 'GET') return false;
      const requested = new URL(req.url ?? '/', 'http://fake');
      const path = requested.pathname;
      const described = /^\/graph\/v[\d.]+\/(\d+)$/.exec(path);
      const getFile = /^\/telegram\/bot([^/]+)\/getFile$/.exec(path);
      const entry = described
        ? byMediaId.get(described[1]!)
        : getFile
          ? byFileId.get(requested.searchParams.get('file_id') ?? '')
          : byPath.get(path);
      if (!entry) return false;
      if (getFile) {
        // Telegram's bots read only their own files; getFile answers Bot API JSON.
        const t = entry.telegram!;
        const ok = getFile[1] === t.token;
        requests.push({ method: 'GET', path, headers: req.headers, status: ok ? 200 : 401 });
        const size = Buffer.isBuffer(entry.file.bytes) ? entry.file.bytes.length : entry.file.bytes.size;
        res
          .writeHead(ok ? 200 : 401, { 'content-type': 'application/json' })
          .end(
            JSON.stringify(
              ok
                ? { ok: true, result: { file_id: t.fileId, file_unique_id: t.fileId.slice(-8), file_size: size, file_path: t.path } }
                : { ok: false, error_code: 401, description: 'Unauthorized' },
            ),
          );
        return true;
      }
      const record = (status: number) => requests.push({ method: req.method ?? '', path, headers: req.headers, status });
      if (!entry.accepts(req.headers)) {
        record(401);
        res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'unauthorized' } }));
        return true;
      }
      const behaviour = entry.file.behaviour ?? 'ok';
      if (behaviour === 'hang') {
        record(0);
        hanging.add(res);
        return true; // broken off by reset(), or closed with the server
      }
      if (behaviour === 'not-found' || behaviour === 'server-error') {
        const status = behaviour === 'not-found' ? 404 : 500;
        record(status);
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: behaviour } }));
        return true;
      }
      if (typeof behaviour === 'object') {
        record(302);
        res.writeHead(302, { location: behaviour.redirect }).end();
        return true;
      }
      record(200);
      const size = Buffer.isBuffer(entry.file.bytes) ? entry.file.bytes.length : entry.file.bytes.size;
      if (described) {
        // WhatsApp's media description, as Cloud API's "Retrieve media URL" answers it.
        const host = `http://${req.headers.host}`;
        res.writeHead(200, { 'content-type': 'application/json' }).end(
          JSON.stringify({
            messaging_product: 'whatsapp',
            url: `${host}/whatsapp-cdn/${entry.mediaId}`,
            mime_type: entry.file.contentType,
            sha256: Buffer.isBuffer(entry.file.bytes) ? createHash('sha256').update(entry.file.bytes).digest('hex') : undefined,
            file_size: size,
            id: entry.mediaId,
          }),
        );
        return true;
      }
      serveBytes(res, entry, size);
      return true;
    },
  };
}

/** Writes the file a chunk at a time, waiting for the socket, counting what it took. */
function serveBytes(res: ServerResponse, entry: Entry, size: number): void {
  const { file } = entry;
  res.writeHead(200, {
    'content-type': file.contentType,
    ...(file.contentLength === false ? {} : { 'content-length': String(size) }),
  });
  const pattern = Buffer.alloc(CHUNK, 0x61);
  let offset = 0;
  let closed = false;
  res.on('close', () => {
    closed = true;
  });
  const next = () => {
    while (!closed && offset < size) {
      const n = Math.min(CHUNK, size - offset);
      const chunk = Buffer.isBuffer(file.bytes) ? file.bytes.subarray(offset, offset + n) : pattern.subarray(0, n);
      offset += n;
      const more = res.write(chunk, (err) => {
        if (!err) entry.sent += n;
      });
      if (!more) {
        res.once('drain', next);
        return;
      }
    }
    if (!closed) res.end();
  };
  next();
}
