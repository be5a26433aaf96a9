import type { ImapFlow } from 'imapflow';
import type { SendCredentials } from '../channels/channel.js';
import { apiUrl, META_GRAPH_API } from '../channels/provider-http.js';
import { outcomes } from '../channels/send-outcome.js';
import { TELEGRAM_API } from '../channels/telegram.js';
import type { IntegrationConfig } from '../config.js';
import { SecretBoxError } from '../crypto/secret-box.js';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { checkedAddress, RefusedAddressError, systemResolve } from '../net/address-guard.js';
import { ImapOpenError, openFolder, openImap } from '../net/imap.js';
import { parseSmtpUrl, SMTP_UNREACHABLE, safeDecode, smtpNotReached, smtpTransport } from '../net/smtp.js';
import {
  CREDENTIALS_DO_NOT_OPEN,
  connectionCredentials,
  lacksCredentials,
  NO_CREDENTIALS,
  providerCredentials,
} from './connection-credentials.js';
import { findConnection } from './connections.queries.js';

/** One quick read; the admin waits for its answer. */
const CHECK_TIMEOUT_MS = 10_000;

export interface CheckResult {
  ok: boolean;
  message: string;
}

/**
 * `POST /v1/connections/:id/check`: the provider's cheapest authenticated read, with the
 * credentials a send would use (docs/connections.md, "Check connection"): the phone number on
 * Graph, Twilio's account, Telegram's getMe, WAHA's session, an SMTP login. The answer says in
 * words what went wrong, never a secret.
 */
export async function checkConnection(deps: Deps, workspaceId: number, id: number): Promise<CheckResult> {
  const connection = await findConnection(deps.db, workspaceId, id);
  if (!connection) throw errors.notFound('connection');
  const key = connection.integration_key;
  if (key === 'livechat') return { ok: true, message: 'live chat needs no provider account: paste the embed snippet into your site' };
  let own: Record<string, string> | null;
  try {
    own = await connectionCredentials(deps, connection.id);
  } catch (err) {
    if (err instanceof SecretBoxError) return { ok: false, message: CREDENTIALS_DO_NOT_OPEN };
    throw err;
  }
  if (lacksCredentials(key, connection.managed_by, own))
    return { ok: false, message: `${NO_CREDENTIALS}: set them with PATCH /v1/connections/:id` };
  const integration: IntegrationConfig = deps.config.integrations[key as keyof typeof deps.config.integrations] ?? {};
  const credentials = providerCredentials(integration, connection.managed_by, own);
  const account = connection.external_account_id;
  const token = credentials.accessToken;
  switch (key) {
    case 'whatsapp':
    case 'social_one.native':
    case 'social_two.native':
      return readProvider(key, apiUrl(credentials.apiBaseUrl ?? META_GRAPH_API, `/${encodeURIComponent(account)}?fields=id`), {
        headers: { authorization: `Bearer ${token}` },
        secrets: [token],
        ok: (body) => `Graph answered for ${describe(body, ['display_phone_number', 'name', 'id']) ?? account}`,
      });
    case 'sms':
    case 'sms.twilio':
      return readProvider(key, twilioAccountUrl(credentials), {
        headers: { authorization: `Basic ${Buffer.from(`${credentials.accountSid}:${token}`).toString('base64')}` },
        secrets: [token, credentials.accountSid],
        ok: (body) => `Twilio account ${describe(body, ['friendly_name', 'sid']) ?? ''} answered`.replace('  ', ' '),
      });
    case 'telegram':
      return readProvider(key, apiUrl(credentials.apiBaseUrl ?? TELEGRAM_API, `/bot${token}/getMe`), {
        headers: {},
        secrets: [token],
        ok: (body) => {
          const bot = describe((body as { result?: unknown })?.result, ['username', 'id']);
          return `Telegram knows the bot${bot ? ` @${bot}` : ''}`;
        },
      });
    case 'whatsapp_session':
    case 'whatsapp_session.waha':
      if (!credentials.apiBaseUrl) return { ok: false, message: `${key}: the operator has set no apiBaseUrl for the gateway` };
      return readProvider(key, apiUrl(credentials.apiBaseUrl, `/api/sessions/${encodeURIComponent(account)}`), {
        headers: token ? { 'x-api-key': token } : {},
        secrets: [token],
        ok: (body) => `the gateway's session ${account} is ${describe(body, ['status']) ?? 'there'}`,
      });
    case 'email':
    case 'email.postmark':
    case 'email.mailgun':
      return smtpLogin(deps, credentials.smtpUrl);
    case 'email.imap':
      return mailboxLogin(deps, credentials, connection.imap_folder ?? 'INBOX');
    default:
      return { ok: false, message: `${key} connections cannot be checked from here` };
  }
}

function twilioAccountUrl(credentials: SendCredentials): string {
  return apiUrl(
    credentials.apiBaseUrl ?? 'https://api.twilio.com',
    `/2010-04-01/Accounts/${encodeURIComponent(credentials.accountSid ?? '')}.json`,
  );
}

/** The first of `fields` that `body` has as a string or number. */
function describe(body: unknown, fields: string[]): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const f of fields) {
    const v = (body as Record<string, unknown>)[f];
    if (typeof v === 'string' || typeof v === 'number') return String(v);
  }
  return undefined;
}

/** A provider's error text, as its body gives it (Graph, Twilio, Telegram and WAHA each nest it their way). */
function providerMessage(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const b = body as Record<string, unknown>;
  const error = b.error;
  if (typeof error === 'object' && error !== null && typeof (error as Record<string, unknown>).message === 'string')
    return (error as Record<string, string>).message;
  for (const f of ['message', 'description', 'error']) if (typeof b[f] === 'string') return b[f] as string;
  return undefined;
}

/** One authenticated GET; redirects are not followed (they would hand the token on). */
async function readProvider(
  key: string,
  url: string,
  how: { headers: Record<string, string>; secrets: (string | undefined)[]; ok: (body: unknown) => string },
): Promise<CheckResult> {
  const clean = (text: string) => {
    const outcome = outcomes(how.secrets).failed(text);
    return outcome.outcome === 'failed' ? outcome.error : text;
  };
  let status: number;
  let body: unknown;
  try {
    const res = await fetch(url, {
      headers: { accept: 'application/json', ...how.headers },
      redirect: 'manual',
      signal: AbortSignal.timeout(CHECK_TIMEOUT_MS),
    });
    status = res.status;
    const text = await res.text();
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
  } catch (err) {
    const reason =
      (err as Error).name === 'TimeoutError' ? `no answer within ${CHECK_TIMEOUT_MS / 1000} s` : 'the provider could not be reached';
    return { ok: false, message: clean(`${key}: ${reason}`) };
  }
  if (status >= 200 && status < 300) return { ok: true, message: clean(how.ok(body)) };
  const said = providerMessage(body);
  const hint = status === 401 || status === 403 ? ' (the credentials were refused)' : '';
  return { ok: false, message: clean(`${key}: HTTP ${status}${hint}${said ? `: ${said}` : ''}`) };
}

/** A mailbox's IMAP login (and its folder), then its SMTP login with the same username and password. */
async function mailboxLogin(deps: Deps, credentials: SendCredentials, folder: string): Promise<CheckResult> {
  const { imapUrl, smtpUrl, username, password } = credentials;
  if (!imapUrl || !smtpUrl || !username || !password)
    return { ok: false, message: `${NO_CREDENTIALS}: set credentials.imapUrl, smtpUrl, username and password` };
  let client: ImapFlow;
  try {
    client = await openImap(
      { imapUrl, username, password },
      { allowPrivate: deps.config.allowPrivateSmtp, resolve: deps.resolveHost, timeoutMs: CHECK_TIMEOUT_MS },
    );
  } catch (err) {
    if (err instanceof ImapOpenError) return { ok: false, message: `email.imap: ${err.message}` };
    throw err;
  }
  try {
    await openFolder(client, folder);
  } catch (err) {
    client.close();
    if (err instanceof ImapOpenError) return { ok: false, message: `email.imap: ${err.message}` };
    return { ok: false, message: 'email.imap: the IMAP server closed the connection while opening the folder' };
  }
  await client.logout().catch(() => client.close());
  const smtp = await smtpLogin(deps, smtpUrl, { user: username, pass: password });
  return smtp.ok ? { ok: true, message: `the IMAP server accepted the login, and ${smtp.message}` } : smtp;
}

/** An SMTP connection and login (EHLO, AUTH) with the connection's smtpUrl, then QUIT. */
async function smtpLogin(deps: Deps, smtpUrl: string | undefined, auth?: { user: string; pass: string }): Promise<CheckResult> {
  if (!smtpUrl) return { ok: false, message: `${NO_CREDENTIALS}: set credentials.smtpUrl` };
  const parsed = parseSmtpUrl(smtpUrl);
  if (!parsed) return { ok: false, message: 'email: smtpUrl must be an smtp:// or smtps:// URL' };
  const smtp = auth ? { ...parsed, auth } : parsed;
  let password = '';
  try {
    password = new URL(smtpUrl).password;
  } catch {
    // parseSmtpUrl read it: not reached
  }
  const secrets = [smtpUrl, password, safeDecode(password), auth?.pass];
  const clean = (text: string) => {
    const outcome = outcomes(secrets).failed(text);
    return outcome.outcome === 'failed' ? outcome.error : text;
  };
  let address: string;
  try {
    address = (await checkedAddress(deps.resolveHost ?? systemResolve, smtp.host, deps.config.allowPrivateSmtp)).address;
  } catch (err) {
    if (err instanceof RefusedAddressError)
      return { ok: false, message: clean(`email: ${err.message}; SMTP servers must be on public addresses`) };
    return { ok: false, message: `email: ${smtp.host} could not be resolved` };
  }
  const transport = await smtpTransport(address, smtp, CHECK_TIMEOUT_MS);
  try {
    await transport.verify();
    return { ok: true, message: `the SMTP server ${smtp.host} accepted the login` };
  } catch (err) {
    if (smtpNotReached(err)) return { ok: false, message: `email: ${SMTP_UNREACHABLE}` };
    return { ok: false, message: clean(`email: ${(err as Error).message}`) };
  } finally {
    transport.close();
  }
}
