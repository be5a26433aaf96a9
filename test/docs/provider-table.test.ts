import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { INTEGRATION_KEYS } from '../../src/config.js';

/**
 * The README's provider table names, for every integration key, the field of the payload its
 * deliveries are resolved to a connection by (docs/webhooks.md has the details).
 */
const readme = readFileSync(path.resolve(import.meta.dirname, '../../README.md'), 'utf8');
const table = readme.split('| integration key | provider | account (→ `externalAccountId`) |')[1]?.split('\n\n')[0] ?? '';

describe("the README's provider table", () => {
  it.each(INTEGRATION_KEYS)('has a row for %s', (key) => {
    expect(table).toMatch(new RegExp(`^\\| \`${key.replace('.', '\\.')}\` \\|[^|]+\\|[^|]*\\S[^|]*\\|$`, 'm'));
  });
});
