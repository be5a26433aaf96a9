import { isIP } from 'node:net';
import type { ImapFlow } from 'imapflow';
import { checkedAddress, RefusedAddressError, type ResolveHost, systemResolve } from './address-guard.js';
import { safeDecode } from './smtp.js';

/** What a connection's `imapUrl` may say: where to connect, nothing else. */
export interface ImapTarget {
  secure: boolean;
  host: string;
  port: number;
}

/**
 * Reads an `imaps://` or `imap://` URL into host, port and security only; a path, a query or
 * credentials in it are ignored (the login is the connection's `username` and `password`).
 * `imap://` upgrades with STARTTLS when the server offers it. Undefined when it is not IMAP.
 */
export function parseImapUrl(imapUrl: string): ImapTarget | undefined {
  let url: URL;
  try {
    url = new URL(imapUrl);
  } catch {
    return undefined;
  }
  if ((url.protocol !== 'imap:' && url.protocol !== 'imaps:') || url.hostname === '') return undefined;
  const secure = url.protocol === 'imaps:';
  return { secure, host: safeDecode(url.hostname).replace(/^\[|\]$/g, ''), port: url.port ? Number(url.port) : secure ? 993 : 143 };
}

export interface ImapLogin {
  imapUrl: string;
  username: string;
  password: string;
}

/** Why an IMAP session could not start, in words that carry no secret and nothing the peer said. */
export class ImapOpenError extends Error {
  override name = 'ImapOpenError';
  constructor(
    message: string,
    /** Whether trying again later may help (a network failure), or not (a refused login, a bad URL). */
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/**
 * The one way this service opens IMAP: the host passes the address guard and the socket goes
 * to the very address checked (the name kept for TLS), every wait bounded, imapflow's logging
 * off (it would print the mail). Resolves logged in.
 */
export async function openImap(
  login: ImapLogin,
  options: { allowPrivate: boolean; resolve?: ResolveHost; timeoutMs: number },
): Promise<ImapFlow> {
  const target = parseImapUrl(login.imapUrl);
  if (!target) throw new ImapOpenError('imapUrl must be an imaps:// or imap:// URL', false);
  let address: string;
  try {
    address = (await checkedAddress(options.resolve ?? systemResolve, target.host, options.allowPrivate)).address;
  } catch (err) {
    const refused = err instanceof RefusedAddressError;
    throw new ImapOpenError(
      refused ? `${(err as Error).message}; IMAP servers must be on public addresses` : `${target.host} could not be resolved`,
      !refused,
    );
  }
  // Loaded here: only a process that reads a mailbox needs it.
  const { ImapFlow: Client } = await import('imapflow');
  const client = new Client({
    host: address,
    port: target.port,
    secure: target.secure,
    ...(isIP(target.host) ? {} : { servername: target.host }),
    auth: { user: login.username, pass: login.password },
    logger: false,
    connectionTimeout: options.timeoutMs,
    greetingTimeout: options.timeoutMs,
    socketTimeout: Math.max(options.timeoutMs, 5 * 60_000),
    disableAutoIdle: true,
    missingIdleCommand: 'NOOP',
  });
  // An error after connect() comes as an event; without a listener it would end the process.
  client.on('error', () => {});
  try {
    await client.connect();
  } catch (err) {
    client.close();
    const e = err as { authenticationFailed?: boolean; code?: string };
    if (e.authenticationFailed || e.code === 'AUTHENTICATIONFAILED')
      throw new ImapOpenError(`the IMAP server ${target.host} refused the login`, false);
    throw new ImapOpenError(`could not reach the IMAP server ${target.host}`, true);
  }
  return client;
}

/**
 * Opens the connection's folder (`imapFolder`). A folder the server answers with NO or BAD
 * (none of that name, or none this login may open) is told in words, naming the folder, not
 * as imapflow's bare "Command failed"; any other failure (the connection lost) is thrown as is.
 */
export async function openFolder(client: ImapFlow, folder: string): Promise<void> {
  try {
    await client.mailboxOpen(folder);
  } catch (err) {
    const status = (err as { responseStatus?: string }).responseStatus;
    if (status === 'NO' || status === 'BAD')
      throw new ImapOpenError(`the IMAP server has no folder "${folder}" this login can open: set imapFolder to one it has`, false);
    throw err;
  }
}

/**
 * The folder a mailbox keeps sent mail in: the one marked `\Sent` (RFC 6154), else one
 * named "Sent"; undefined when it has none.
 */
export async function sentFolder(client: ImapFlow): Promise<string | undefined> {
  const folders = await client.list();
  return (folders.find((f) => f.specialUse === '\\Sent') ?? folders.find((f) => /^sent$/i.test(f.name)))?.path;
}
