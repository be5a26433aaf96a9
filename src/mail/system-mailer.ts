import type { NodemailerError } from 'nodemailer';
import type { Deps } from '../deps.js';
import { errors } from '../http/errors.js';
import { checkedAddress, RefusedAddressError, systemResolve } from '../net/address-guard.js';
import { parseSmtpUrl, smtpTransport } from '../net/smtp.js';
import { redactSecrets } from '../text/redact.js';
import { truncate } from '../text/truncate.js';

/** One message of the service's own (docs/accounts.md): always both a plain-text and an HTML part. */
export interface SystemMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** A send that failed; the message names why, with the SMTP URL and password cut out. */
export class MailSendError extends Error {
  override name = 'MailSendError';
}

export interface SystemMailer {
  /** Sends now; throws MailSendError when the server refused or could not be reached. */
  send(mail: SystemMail): Promise<void>;
  /**
   * Sends after the caller has answered, so how long the answer takes says nothing about
   * whether there was a mail to send (a password reset for an unknown address). A failure is
   * logged, never thrown.
   */
  sendLater(mail: SystemMail, what: string): void;
  /** Resolves once every send started so far has ended (tests wait on it, the shutdown too). */
  settled(): Promise<void>;
}

/** A failed send's reason is kept to at most this many characters in the log. */
const MAIL_ERROR_MAX = 1000;

/** One SMTP conversation may take this long, greeting to the server's last answer. */
export const SYSTEM_MAIL_TIMEOUT_MS = 15_000;

const mailers = new WeakMap<Deps, SystemMailer | null>();

/** The service's mailer, or undefined when INBOX_SMTP_URL/INBOX_MAIL_FROM are unset. */
export function systemMailer(deps: Deps): SystemMailer | undefined {
  let mailer = mailers.get(deps);
  if (mailer === undefined) {
    mailer = deps.config.systemMail ? createSystemMailer(deps, deps.config.systemMail) : null;
    mailers.set(deps, mailer);
  }
  return mailer ?? undefined;
}

/** The mailer, or 503 `mail_unavailable`: checked before anything is written. */
export function requireSystemMailer(deps: Deps): SystemMailer {
  const mailer = systemMailer(deps);
  if (!mailer) throw errors.mailUnavailable();
  return mailer;
}

function createSystemMailer(deps: Deps, settings: { smtpUrl: string; from: string }): SystemMailer {
  const inFlight = new Set<Promise<void>>();
  const smtp = parseSmtpUrl(settings.smtpUrl);
  let password = '';
  try {
    password = new URL(settings.smtpUrl).password;
  } catch {
    // The configuration has checked the URL already.
  }
  const clean = (text: string) => truncate(redactSecrets(text, [settings.smtpUrl, password, smtp?.auth?.pass]), MAIL_ERROR_MAX);

  async function send(mail: SystemMail): Promise<void> {
    if (!smtp) throw new MailSendError('INBOX_SMTP_URL is not an smtp:// or smtps:// URL');
    // The outbound address guard, as for a connection's smtpUrl: the host must be public unless
    // INBOX_ALLOW_PRIVATE_SMTP, and the connection goes to the very address that was checked.
    let address: string;
    try {
      address = (await checkedAddress(deps.resolveHost ?? systemResolve, smtp.host, deps.config.allowPrivateSmtp)).address;
    } catch (err) {
      if (err instanceof RefusedAddressError)
        throw new MailSendError(`INBOX_SMTP_URL: ${err.message}; set INBOX_ALLOW_PRIVATE_SMTP=true for a relay on your own network`);
      throw new MailSendError('could not resolve the host of INBOX_SMTP_URL');
    }
    const transport = await smtpTransport(address, smtp, SYSTEM_MAIL_TIMEOUT_MS);
    try {
      await transport.sendMail({
        from: settings.from,
        to: mail.to,
        subject: mail.subject,
        text: mail.text,
        html: mail.html,
        signal: AbortSignal.timeout(SYSTEM_MAIL_TIMEOUT_MS),
        disableFileAccess: true,
        disableUrlAccess: true,
      });
    } catch (err) {
      const e = err as NodemailerError;
      if (e.code === 'EABORT') throw new MailSendError(`the SMTP server did not answer within ${SYSTEM_MAIL_TIMEOUT_MS} ms`);
      throw new MailSendError(clean(`the SMTP server refused or failed the mail: ${e.message}`));
    } finally {
      transport.close();
    }
  }

  return {
    send,
    sendLater(mail, what) {
      const running: Promise<void> = send(mail)
        .then(
          () => deps.log.info({ mail: what }, 'system mail sent'),
          (err: unknown) =>
            deps.log.warn({ mail: what, reason: err instanceof MailSendError ? err.message : 'unexpected error' }, 'system mail not sent'),
        )
        .finally(() => inFlight.delete(running));
      inFlight.add(running);
    },
    async settled() {
      while (inFlight.size > 0) await Promise.allSettled([...inFlight]);
    },
  };
}
