import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formParams, parseForm, payloadOf } from '../../src/channels/sms-twilio.js';

// A Twilio delivery's body is read once, for its signature and its payload: the payload made
// from the signed parameters must be the one a second parse of the body would make.
describe('a Twilio form read once', () => {
  it('keeps the last value of a repeated name, the names in their first order, and names like __proto__ as data', () => {
    const bodies = [
      'Body=first&From=%2B15550001&Body=second',
      '__proto__=polluted&constructor=x&toString=y',
      'MediaUrl0=a&NumMedia=1&MediaUrl0=b&empty=&noequals&+plus+=a+b',
      'bad=%E0%A4%A&pct=%zz&utf=%C3%A9%F0%9F%99%82',
      '',
    ];
    for (const body of bodies) {
      const payload = payloadOf(formParams(body));
      expect(payload, body).toEqual(parseForm(body));
      expect(Object.keys(payload), body).toEqual(Object.keys(parseForm(body)));
      expect(Object.getPrototypeOf(payload)).toBe(Object.prototype);
    }
    expect(Object.getOwnPropertyDescriptor(payloadOf(formParams('__proto__=polluted')), '__proto__')?.value).toBe('polluted');
  });

  it('matches a second parse for any form (property, seeded)', () => {
    const part = fc.oneof(fc.constantFrom('Body', 'From', '__proto__', 'a', '', '%', '%2', '+', '='), fc.string({ maxLength: 6 }));
    const pair = fc.tuple(part, part).map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`);
    const raw = fc.oneof(pair, fc.string({ maxLength: 12 }));
    fc.assert(
      fc.property(fc.array(raw, { maxLength: 12 }), (parts) => {
        const body = parts.join('&');
        const payload = payloadOf(formParams(body));
        expect(payload).toEqual(parseForm(body));
        expect(Object.keys(payload)).toEqual(Object.keys(parseForm(body)));
      }),
      { seed: 20261127, numRuns: 300 },
    );
  });
});
