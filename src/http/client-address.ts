import ipaddr from 'ipaddr.js';

/**
 * The key a per-address limit counts a client under: an IPv4 address as itself, an IPv6
 * address by its /64. One IPv6 host is usually given a whole /64, so counting single
 * addresses would hand it 2^64 fresh budgets. An IPv4-mapped IPv6 address (`::ffff:1.2.3.4`,
 * what a dual-stack socket reports) counts as the IPv4 it carries. Anything that does not
 * parse is returned unchanged, so it still gets a budget of its own.
 */
export function clientAddressKey(ip: string): string {
  if (!ipaddr.isValid(ip)) return ip;
  const address = ipaddr.process(ip);
  if (address.kind() === 'ipv4') return address.toString();
  const parts = (address as ipaddr.IPv6).parts.slice(0, 4);
  return `${ipaddr.fromByteArray([...parts.flatMap((p) => [p >> 8, p & 0xff]), ...new Array<number>(8).fill(0)]).toString()}/64`;
}
