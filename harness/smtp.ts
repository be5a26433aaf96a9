import type { AddressInfo } from 'node:net';
import { type ParsedMail, simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface ReceivedMail {
  from: string | undefined;
  to: string[];
  mail: ParsedMail;
}

export interface FakeSmtp {
  /** `smtp://user:pass@127.0.0.1:port` when `auth` was given, else `smtp://127.0.0.1:port`. */
  url: string;
  mails: ReceivedMail[];
  /** RCPT TO this address is refused with `code` (550: permanent, 451: try later). */
  refuse(address: string, code: 550 | 451): void;
  reset(): void;
  close(): Promise<void>;
}

/**
 * An in-process SMTP server (plain text, no STARTTLS) that parses what it receives with
 * mailparser, so tests see the headers a real recipient would.
 */
export async function startSmtpServer(
  options: { port?: number; auth?: { user: string; pass: string }; onMail?: (m: ReceivedMail) => void } = {},
): Promise<FakeSmtp> {
  const mails: ReceivedMail[] = [];
  const refusals = new Map<string, 550 | 451>();
  const { auth } = options;
  const server = new SMTPServer({
    secure: false,
    disabledCommands: auth ? ['STARTTLS'] : ['STARTTLS', 'AUTH'],
    authOptional: !auth,
    allowInsecureAuth: true,
    logger: false,
    onAuth(a, _session, callback) {
      if (auth && a.username === auth.user && a.password === auth.pass) return callback(null, { user: a.username });
      callback(Object.assign(new Error('5.7.8 Authentication credentials invalid'), { responseCode: 535 }));
    },
    onRcptTo(address, _session, callback) {
      const code = refusals.get(address.address.toLowerCase());
      if (code === 550) return callback(Object.assign(new Error('5.1.1 Mailbox unavailable'), { responseCode: 550 }));
      if (code === 451) return callback(Object.assign(new Error('4.7.1 Greylisted, try again later'), { responseCode: 451 }));
      callback();
    },
    onData(stream, session, callback) {
      simpleParser(stream)
        .then((mail) => {
          const received: ReceivedMail = {
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : undefined,
            to: session.envelope.rcptTo.map((r) => r.address),
            mail,
          };
          mails.push(received);
          options.onMail?.(received);
          callback();
        })
        .catch((err: Error) => callback(err));
    },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const { port } = server.server.address() as AddressInfo;
  const credentials = auth ? `${encodeURIComponent(auth.user)}:${encodeURIComponent(auth.pass)}@` : '';
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    mails,
    refuse: (address, code) => void refusals.set(address.toLowerCase(), code),
    reset() {
      mails.length = 0;
      refusals.clear();
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
