import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

const problems = (env: Record<string, string>) => {
  try {
    loadConfig(env);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('INBOX_STORAGE and INBOX_S3_*', () => {
  it('keeps attachments in PostgreSQL by default, with S3 settings unused', () => {
    const config = loadConfig({});
    expect(config.storage).toBe('postgres');
    expect(config.s3).toEqual({ bucket: undefined, endpoint: undefined, region: 'us-east-1', prefix: '' });
  });

  it('reads the bucket, endpoint, region and prefix for s3', () => {
    const config = loadConfig({
      INBOX_STORAGE: 's3',
      INBOX_S3_BUCKET: 'inbox-files',
      INBOX_S3_ENDPOINT: 'http://127.0.0.1:9000',
      INBOX_S3_REGION: 'eu-west-1',
      INBOX_S3_PREFIX: 'inbox/',
    });
    expect(config.storage).toBe('s3');
    expect(config.s3).toEqual({ bucket: 'inbox-files', endpoint: 'http://127.0.0.1:9000', region: 'eu-west-1', prefix: 'inbox/' });
  });

  it('refuses at start s3 without a bucket, an unknown store and an endpoint that is not a URL', () => {
    expect(problems({ INBOX_STORAGE: 's3' })).toEqual(['INBOX_S3_BUCKET: required when INBOX_STORAGE=s3']);
    expect(problems({ INBOX_STORAGE: 'disk' })).toEqual(['INBOX_STORAGE: expected postgres or s3, got "disk"']);
    expect(problems({ INBOX_STORAGE: 's3', INBOX_S3_BUCKET: 'b', INBOX_S3_ENDPOINT: 'minio:9000' })).toEqual([
      'INBOX_S3_ENDPOINT: expected an http(s) URL, got "minio:9000"',
    ]);
  });
});
