import { describe, expect, it } from 'vitest';
import { clientAddressKey } from '../../src/http/client-address.js';

describe('clientAddressKey', () => {
  it('keys IPv4 as itself, IPv6 by its /64, and IPv4-mapped IPv6 as the IPv4 it carries', () => {
    expect(clientAddressKey('203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:0db8:0001:0002:ffff:ffff:ffff:ffff')).toBe('2001:db8:1:2::/64');
    expect(clientAddressKey('2001:db8:1:3::1')).toBe('2001:db8:1:3::/64');
    expect(clientAddressKey('::1')).toBe('::/64');
    expect(clientAddressKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(clientAddressKey('not-an-address')).toBe('not-an-address');
  });
});
