// Phase `--attachments`: files through the service with the `postgres` store (docs/attachments.md).
// One api process; `POST /v1/attachments` (multipart field `file`, a write key) of an
// --attachment-mb file, then `GET /v1/attachments/:id/content`, each timed alone (median of 3)
// and reported in MB/s; then --attachment-transfers uploads at once and as many downloads at
// once, with the service process's RSS growth over its settled RSS before them. The bytes are
// checked (SHA-256) on the way back. Goals: ≥ 100 MB/s each way on loopback, RSS growth < 50 MB.
// The upload body is generated as it is sent (one random MB repeated), so the bench process
// itself holds no file.
import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import { issueApiKey } from '../../src/api-keys/api-keys.service.js';
import type { Db } from '../../src/db/database.js';
import { type BenchService, median, say, serve } from './common.js';
import type { BenchOptions } from './options.js';

const MB = 1024 * 1024;
const BLOCK = randomBytes(MB);
const BOUNDARY = `----inbox-bench-${randomBytes(8).toString('hex')}`;

interface Answer {
  status: number;
  body: string;
}

/** The file's digest, computed the same way the download's is. */
function digestOf(size: number): string {
  const hash = createHash('sha256');
  for (let at = 0; at < size; at += MB) hash.update(BLOCK.subarray(0, Math.min(MB, size - at)));
  return hash.digest('hex');
}

/** A multipart upload of `size` bytes, streamed with backpressure. */
function upload(url: string, key: string, size: number): Promise<Answer> {
  const head = Buffer.from(
    `--${BOUNDARY}\r\ncontent-disposition: form-data; name="file"; filename="bench.bin"\r\ncontent-type: application/octet-stream\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${BOUNDARY}--\r\n`);
  return new Promise((resolve, reject) => {
    const req = http.request(`${url}/v1/attachments`, {
      method: 'POST',
      headers: {
        'x-api-key': key,
        'content-type': `multipart/form-data; boundary=${BOUNDARY}`,
        'content-length': head.byteLength + size + tail.byteLength,
      },
    });
    req.on('response', (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    let sent = 0;
    const write = () => {
      // The service may answer (413, 404) before the body is all sent: stop writing then.
      if (req.destroyed || req.writableEnded) return;
      if (sent === 0) req.write(head);
      while (sent < size) {
        const piece = BLOCK.subarray(0, Math.min(MB, size - sent));
        sent += piece.byteLength;
        if (!req.write(piece)) {
          req.once('drain', write);
          return;
        }
      }
      req.end(tail);
    };
    write();
  });
}

/** Reads the content route to its end: the status, the bytes counted and their digest. */
function download(url: string, key: string, id: number): Promise<{ status: number; size: number; digest: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(`${url}/v1/attachments/${id}/content`, { headers: { 'x-api-key': key } }, (res) => {
        const hash = createHash('sha256');
        let size = 0;
        res.on('data', (d: Buffer) => {
          size += d.byteLength;
          hash.update(d);
        });
        res.on('end', () => resolve({ status: res.statusCode ?? 0, size, digest: hash.digest('hex') }));
        res.on('error', reject);
      })
      .on('error', reject);
  });
}

const idOf = (answer: Answer): number => {
  const parsed = JSON.parse(answer.body) as { id?: number; data?: { id?: number; status?: string } };
  const id = parsed.data?.id ?? parsed.id;
  if (typeof id !== 'number') throw new Error(`POST /v1/attachments answered ${answer.status} without an id: ${answer.body.slice(0, 300)}`);
  return id;
};

/** RSS of `svc` sampled every 50 ms while `work` runs: the peak, in MB. */
async function peakRssDuring(svc: BenchService, work: () => Promise<unknown>): Promise<number> {
  let peak = svc.rssMb();
  const sampler = setInterval(() => (peak = Math.max(peak, svc.rssMb())), 50);
  try {
    await work();
  } finally {
    clearInterval(sampler);
  }
  return Math.max(peak, svc.rssMb());
}

export type AttachmentsResult =
  | { skipped: string }
  | {
      fileMb: number;
      uploadMbPerSec: number;
      downloadMbPerSec: number;
      transfers: number;
      rssBeforeMb: number;
      uploadsRssGrowthMb: number;
      downloadsRssGrowthMb: number;
      concurrentUploadMbPerSec: number;
      concurrentDownloadMbPerSec: number;
    };

export async function measureAttachments(
  options: BenchOptions,
  databaseUrl: string,
  db: Db,
  workspaceId: number,
): Promise<AttachmentsResult> {
  const size = Math.round(options.attachmentMb * MB);
  const n = options.attachmentTransfers;
  say(`attachments: ${options.attachmentMb} MB files up and down through one api process (postgres store), then ${n} at once`);
  const key = (await issueApiKey(db, workspaceId, 'bench attachments', ['write'])).key;
  const api = await serve(options, 'api', databaseUrl, {
    env: { INBOX_STORAGE: 'postgres', INBOX_MAX_ATTACHMENT_BYTES: String(size + MB) },
  });
  try {
    const probe = await upload(api.url, key, 1);
    if (probe.status === 404 && !probe.body.includes('"id"')) {
      const skipped = `POST /v1/attachments is not on this build (404: ${probe.body.slice(0, 200)}); the attachments phase needs the attachment routes`;
      say(`attachments: skipped: ${skipped}`);
      return { skipped };
    }
    if (probe.status !== 201) throw new Error(`POST /v1/attachments answered ${probe.status}: ${probe.body.slice(0, 500)}`);
    const expected = digestOf(size);

    const once = async () => {
      let t = performance.now();
      const up = await upload(api.url, key, size);
      const upSeconds = (performance.now() - t) / 1000;
      if (up.status !== 201) throw new Error(`POST /v1/attachments answered ${up.status}: ${up.body.slice(0, 500)}`);
      const id = idOf(up);
      t = performance.now();
      const down = await download(api.url, key, id);
      const downSeconds = (performance.now() - t) / 1000;
      if (down.status !== 200 || down.size !== size || down.digest !== expected)
        throw new Error(`GET /v1/attachments/${id}/content answered ${down.status} with ${down.size} bytes, not the ${size} uploaded`);
      return { id, up: size / MB / upSeconds, down: size / MB / downSeconds };
    };
    await once(); // warm the pool, the plan cache and the JIT
    const timed = [await once(), await once(), await once()];

    const rssBeforeMb = api.rssMb();
    const ids: number[] = [];
    let t = performance.now();
    const uploadsPeak = await peakRssDuring(api, () =>
      Promise.all(
        Array.from({ length: n }, async () => {
          const up = await upload(api.url, key, size);
          if (up.status !== 201) throw new Error(`POST /v1/attachments answered ${up.status}: ${up.body.slice(0, 500)}`);
          ids.push(idOf(up));
        }),
      ),
    );
    const concurrentUploadMbPerSec = (n * size) / MB / ((performance.now() - t) / 1000);
    t = performance.now();
    const downloadsPeak = await peakRssDuring(api, () =>
      Promise.all(
        ids.map(async (id) => {
          const down = await download(api.url, key, id);
          if (down.status !== 200 || down.digest !== expected)
            throw new Error(`GET /v1/attachments/${id}/content answered ${down.status}, not the bytes uploaded`);
        }),
      ),
    );
    const concurrentDownloadMbPerSec = (n * size) / MB / ((performance.now() - t) / 1000);
    const r = (x: number) => Number(x.toFixed(1));
    return {
      fileMb: options.attachmentMb,
      uploadMbPerSec: r(median(timed.map((x) => x.up))),
      downloadMbPerSec: r(median(timed.map((x) => x.down))),
      transfers: n,
      rssBeforeMb: r(rssBeforeMb),
      uploadsRssGrowthMb: r(uploadsPeak - rssBeforeMb),
      downloadsRssGrowthMb: r(downloadsPeak - rssBeforeMb),
      concurrentUploadMbPerSec: r(concurrentUploadMbPerSec),
      concurrentDownloadMbPerSec: r(concurrentDownloadMbPerSec),
    };
  } finally {
    await api.stop();
  }
}
