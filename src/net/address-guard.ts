import { promises as dns } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * The SSRF guard of outbound webhooks (docs/outbound-webhooks.md): a customer's URL may only
 * reach public addresses. Every address a name resolves to must be public unicast — not
 * loopback, private, link-local (169.254.169.254, the cloud metadata address, among them),
 * CGNAT, multicast, unique-local, reserved, nor an IPv4-mapped, -compatible or translated form of those —
 * and the connection goes to the very address that was checked: the check runs inside the
 * socket's own lookup, so there is no second resolution for a rebinding name to change.
 */

/** Resolves a host name to every address it has (the system resolver by default). */
export type ResolveHost = (hostname: string) => Promise<{ address: string; family: number }[]>;

export const systemResolve: ResolveHost = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** The range that makes `address` unreachable for a webhook, or undefined when it is public. */
export function refusedRange(address: string): string | undefined {
  if (!ipaddr.isValid(address)) return 'invalid';
  // process() turns an IPv4-mapped IPv6 address (::ffff:10.0.0.1) into the IPv4 it carries.
  const range = ipaddr.process(address).range();
  if (range !== 'unicast') return range;
  // ::/96 (the deprecated IPv4-compatible form, ::7f00:1 for ::127.0.0.1) is no public address.
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && parsed.match(IPV4_COMPATIBLE)) return 'reserved';
  return undefined;
}

const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96');

const RANGE_WORDS: Record<string, string> = {
  loopback: 'a loopback',
  private: 'a private',
  linkLocal: 'a link-local',
  carrierGradeNat: 'a carrier-grade NAT',
  uniqueLocal: 'a unique-local',
  multicast: 'a multicast',
  unspecified: 'an unspecified',
  broadcast: 'a broadcast',
  reserved: 'a reserved',
};

/**
 * Why `host` is refused. A name's resolved address is never named: the text reaches the
 * tenant (a delivery log, a message's error), and what an internal name resolves to is a
 * map of the deployment's network.
 */
export function describeRefusal(host: string, address: string, range: string): string {
  const what = RANGE_WORDS[range] ?? `a non-public (${range})`;
  return host === address ? `${address} is ${what} address` : `${host} resolves to ${what} address`;
}

/** The host of a URL as an IP address, when it is one (brackets of an IPv6 literal removed). */
export function ipLiteral(url: URL): string | undefined {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  return isIP(host) ? host : undefined;
}

export class RefusedAddressError extends Error {
  readonly code = 'ERR_REFUSED_ADDRESS';
}

/**
 * The one address to connect to for `host` (a name or a literal), after the guard: a name is
 * resolved once, and refused (RefusedAddressError) unless every address it has is public.
 * Connect to the address returned, never to the name again, so a rebinding name cannot swap
 * in another address between the check and the connection.
 */
export async function checkedAddress(
  resolve: ResolveHost,
  host: string,
  allowPrivate: boolean,
): Promise<{ address: string; family: number }> {
  const literal = host.replace(/^\[|\]$/g, '');
  const family = isIP(literal);
  const addresses = family !== 0 ? [{ address: literal, family }] : await resolve(host);
  if (addresses.length === 0) throw new Error(`${host} has no address`);
  if (!allowPrivate) {
    for (const a of addresses) {
      const range = refusedRange(a.address);
      if (range) throw new RefusedAddressError(`refused: ${describeRefusal(family !== 0 ? literal : host, a.address, range)}`);
    }
  }
  return addresses[0]!;
}

/**
 * A `lookup` for net/tls connect (undici's `connect.lookup`): resolves the name, refuses it
 * unless every address is public, and hands the socket the first checked address.
 */
export function guardedLookup(resolve: ResolveHost, allowPrivate: boolean): LookupFunction {
  return (hostname, options, callback) => {
    checkedAddress(resolve, hostname, allowPrivate)
      .then((chosen) => {
        if (options.all) (callback as (err: null, addresses: { address: string; family: number }[]) => void)(null, [chosen]);
        else callback(null, chosen.address, chosen.family);
      })
      .catch((err: NodeJS.ErrnoException) => callback(err, '', 0));
  };
}
