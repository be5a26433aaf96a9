/**
 * Whether `address` (lower-cased) is one plain mailbox, `local@domain.tld`, as a provider's
 * From header carries it: no display name, no list, no comment, no quote, no space or line
 * break. An e-mail contact's handle is the To of every reply, and a mail library reads a
 * comma, a semicolon or a line break in it as more recipients.
 */
export function isSingleMailbox(address: string): boolean {
  return address.length <= 254 && MAILBOX.test(address);
}

/**
 * Labels of letters, digits and inner hyphens in any script, and a top-level domain of letters
 * or punycode (`xn--p1ai`): an internationalised domain is a mailbox too, and refusing its mail
 * would lose it.
 */
const MAILBOX = /^[^\s@<>(),;:"[\]\\]{1,64}@([\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+(?:\p{L}{2,63}|xn--[a-z0-9-]{1,59})$/u;
