/**
 * Whether `address` (lower-cased) is one plain mailbox, `local@domain.tld`, as a provider's
 * From header carries it: no display name, no list, no comment, no quote, no space or line
 * break. An e-mail contact's handle is the To of every reply, and a mail library reads a
 * comma, a semicolon or a line break in it as more recipients.
 */
export function isSingleMailbox(address: string): boolean {
  return address.length <= 254 && MAILBOX.test(address);
}

const MAILBOX = /^[^\s@<>(),;:"[\]\\]{1,64}@([a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;
