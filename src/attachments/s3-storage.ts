import type { Readable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import type { Config } from '../config.js';
import { type AttachmentStorage, StorageUnavailableError, TooLargeError } from './storage.js';

/**
 * The size of one multipart part: S3 wants at least 5 MB for every part but the last, and a
 * part is held whole while it is sent, so this is also what one write keeps in memory.
 */
export const PART_BYTES = 5 * 1024 * 1024;

export interface S3StorageOptions {
  bucket: string;
  endpoint?: string | undefined;
  region: string;
  /** Put before every key, e.g. `inbox/`. */
  prefix: string;
  /** Overrides of the client, for tests: a short timeout and few retries against a stopped server. */
  client?: Partial<S3ClientConfig>;
  /** Milliseconds a request may wait for a connection or for an answer (default 30 s). */
  requestTimeoutMs?: number;
}

/** INBOX_S3_*, as config.ts read them. */
export function s3OptionsFrom(config: Config): S3StorageOptions {
  if (config.s3.bucket === undefined) throw new Error('INBOX_S3_BUCKET is required when INBOX_STORAGE=s3');
  return { bucket: config.s3.bucket, endpoint: config.s3.endpoint, region: config.s3.region, prefix: config.s3.prefix };
}

// A missing object, not a missing bucket (also a 404): that one is a fault to report.
const missing = (err: unknown) => {
  const name = (err as { name?: string }).name;
  return name === 'NoSuchKey' || name === 'NotFound';
};

/** What the caller may show: the operation and the SDK's error name and message, never a credential. */
const unavailable = (what: string, err: unknown) =>
  new StorageUnavailableError(`S3 ${what} failed: ${(err as Error).name}: ${(err as Error).message}`, { cause: err });

/**
 * Attachments in an S3 bucket (or an S3-compatible server: `endpoint`, path-style addressing).
 * Credentials come from the AWS SDK's usual chain (AWS_ACCESS_KEY_ID…, a profile, a role).
 * A write reads its source a part at a time: one PutObject when the whole body fits in the
 * first part, else a multipart upload of PART_BYTES parts, so memory stays at one part
 * whatever the file's size. Every network or S3 failure becomes StorageUnavailableError.
 */
export function s3Storage(options: S3StorageOptions): AttachmentStorage & { client: S3Client } {
  const timeout = options.requestTimeoutMs ?? 30_000;
  // The SDK warns on Node 20 that its releases after January 2027 need Node 22. This project
  // pins the SDK to an exact version (package.json), so the warning tells an operator nothing
  // they can act on; one who wants it back sets the variable to "false".
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  const client = new S3Client({
    region: options.region,
    ...(options.endpoint ? { endpoint: options.endpoint, forcePathStyle: true } : {}),
    requestHandler: { connectionTimeout: timeout, requestTimeout: timeout, throwOnRequestTimeout: true },
    // Checksums only where S3 demands them: S3-compatible servers do not all check the
    // newer trailing ones, and TLS and the ETag already cover a part in transit.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    ...options.client,
  });
  const Bucket = options.bucket;
  const objectKey = (key: string) => `${options.prefix}${key}`;

  return {
    client,

    async put(key, body, { maxBytes }) {
      const Key = objectKey(key);
      const iterator = body[Symbol.asyncIterator]();
      let size = 0;
      let done = false;
      // The next part: up to PART_BYTES read from the source, or TooLargeError past maxBytes.
      const nextPart = async (): Promise<Buffer> => {
        const pieces: Buffer[] = [];
        let bytes = 0;
        while (bytes < PART_BYTES && !done) {
          const step = await iterator.next();
          if (step.done) {
            done = true;
            break;
          }
          const piece = step.value;
          size += piece.byteLength;
          if (size > maxBytes) throw new TooLargeError(maxBytes);
          pieces.push(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
          bytes += piece.byteLength;
        }
        return Buffer.concat(pieces, bytes);
      };

      let part: Buffer;
      try {
        part = await nextPart();
      } catch (err) {
        await iterator.return?.();
        throw err;
      }
      if (done) {
        try {
          await client.send(new PutObjectCommand({ Bucket, Key, Body: part, ContentLength: part.byteLength }));
        } catch (err) {
          throw unavailable('PutObject', err);
        }
        return { size };
      }

      let uploadId: string | undefined;
      try {
        const created = await client.send(new CreateMultipartUploadCommand({ Bucket, Key }));
        uploadId = created.UploadId;
      } catch (err) {
        await iterator.return?.();
        throw unavailable('CreateMultipartUpload', err);
      }
      const parts: { PartNumber: number; ETag: string }[] = [];
      try {
        // The part in hand goes out while the next one is read, so the source and S3 overlap;
        // at most two parts are ever held.
        for (;;) {
          const PartNumber = parts.length + 1;
          const sending = client
            .send(new UploadPartCommand({ Bucket, Key, UploadId: uploadId, PartNumber, Body: part, ContentLength: part.byteLength }))
            .catch((err) => {
              throw unavailable('UploadPart', err);
            });
          const reading = done ? Promise.resolve(Buffer.alloc(0)) : nextPart();
          const [sent, next] = await Promise.all([sending, reading]);
          parts.push({ PartNumber, ETag: sent.ETag ?? '' });
          if (next.byteLength === 0) break;
          part = next;
        }
        await client
          .send(new CompleteMultipartUploadCommand({ Bucket, Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }))
          .catch((err) => {
            throw unavailable('CompleteMultipartUpload', err);
          });
        return { size };
      } catch (err) {
        await iterator.return?.();
        // Best effort: an upload never completed leaves no object, only parts S3 bills for
        // until a lifecycle rule (or this abort) removes them.
        await client.send(new AbortMultipartUploadCommand({ Bucket, Key, UploadId: uploadId })).catch(() => {});
        throw err;
      }
    },

    async get(key) {
      try {
        const got = await client.send(new GetObjectCommand({ Bucket, Key: objectKey(key) }));
        return (got.Body as Readable | undefined) ?? undefined;
      } catch (err) {
        if (missing(err)) return undefined;
        throw unavailable('GetObject', err);
      }
    },

    async delete(key) {
      try {
        await client.send(new DeleteObjectCommand({ Bucket, Key: objectKey(key) }));
      } catch (err) {
        if (missing(err)) return;
        throw unavailable('DeleteObject', err);
      }
    },
  };
}
