import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.js';

describe('INBOX_PUBLIC_URL', () => {
  it('defaults to http://HOST:PORT and drops a trailing slash', () => {
    expect(loadConfig({ HOST: '0.0.0.0', PORT: '8080' }).publicUrl).toBe('http://0.0.0.0:8080');
    expect(loadConfig({ HOST: '::1', PORT: '8080' }).publicUrl).toBe('http://[::1]:8080');
    expect(loadConfig({ INBOX_PUBLIC_URL: 'https://inbox.example.com/base/' }).publicUrl).toBe('https://inbox.example.com/base');
  });
  it('refuses what is not an http(s) base URL, naming the variable', () => {
    for (const value of ['inbox.example.com', 'ftp://inbox.example.com', 'https://inbox.example.com/?x=1']) {
      expect(() => loadConfig({ INBOX_PUBLIC_URL: value })).toThrow(ConfigError);
      expect(() => loadConfig({ INBOX_PUBLIC_URL: value })).toThrow(/^INBOX_PUBLIC_URL: expected an http/);
    }
  });
});
