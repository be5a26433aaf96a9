import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { jsonArray } from '../../src/text/json-array.js';

describe('jsonArray', () => {
  it('writes what JSON.stringify writes for the array of the items, none, one or many', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue()), (values) => {
        expect(jsonArray(values, (v) => JSON.stringify(v))).toBe(JSON.stringify(values));
      }),
      { seed: 11, numRuns: 300 },
    );
    expect(jsonArray([], () => 'x')).toBe('[]');
    expect(jsonArray([{ a: 1 }], (v) => JSON.stringify(v))).toBe('[{"a":1}]');
  });
});
