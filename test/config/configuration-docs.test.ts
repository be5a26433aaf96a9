import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Every variable the configuration reads is documented where a newcomer looks: a row of
 * docs/configuration.md and a commented line of .env.example. A variable added to
 * src/config.ts without both fails here.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const read = (file: string) => readFileSync(path.join(ROOT, file), 'utf8');
const VARIABLE = /'((?:INBOX|DATABASE|NODE|LOG|AWS|OTEL)_[A-Z0-9_]+|PORT|HOST)'/g;
const variables = [...new Set([...read('src/config.ts').matchAll(VARIABLE)].map((m) => m[1]!))];

describe('the configuration is documented', () => {
  it('finds the variables in src/config.ts', () => {
    expect(variables).toEqual(expect.arrayContaining(['DATABASE_URL', 'PORT', 'INBOX_PUBLIC_URL', 'INBOX_INTEGRATIONS']));
  });

  it.each(variables)('%s has a row in docs/configuration.md and a line in .env.example', (name) => {
    expect(read('docs/configuration.md')).toMatch(new RegExp(`^\\| [^|]*\`${name}\``, 'm'));
    expect(read('.env.example')).toMatch(new RegExp(`^#? ?${name}=`, 'm'));
  });
});
