import { describe, expect, it } from 'vitest';
import { truncate } from '../../src/text/truncate.js';

describe('truncate', () => {
  it('keeps short text, cuts long text to max characters, and never splits a surrogate pair', () => {
    expect(truncate('abc', 3)).toBe('abc');
    expect(truncate('abcdef', 3)).toBe('abc');
    expect(truncate('😀😀😀', 2)).toBe('😀😀');
    expect(truncate('a😀b', 2)).toBe('a😀');
    expect(truncate('x'.repeat(5000), 1000)).toHaveLength(1000);
  });
});
