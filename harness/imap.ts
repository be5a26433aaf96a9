import { createRequire } from 'node:module';
import type { AddressInfo, Server, Socket } from 'node:net';
import { ImapFlow } from 'imapflow';

// hoodiecrow-imap is CommonJS without types: only what the tests use is typed here.
interface HoodiecrowMessage {
  raw: string;
  uid: number;
  flags: string[];
}
interface HoodiecrowMailbox {
  messages: HoodiecrowMessage[];
  uidvalidity: number;
  uidnext: number;
}
interface Hoodiecrow {
  server: Server;
  listen(port: number, host: string, cb: () => void): void;
  close(cb?: () => void): void;
  getMailbox(path: string): HoodiecrowMailbox | undefined;
}
const hoodiecrow = createRequire(import.meta.url)('hoodiecrow-imap') as (options: object) => Hoodiecrow;

export interface FakeImap {
  /** `imap://127.0.0.1:port` (no TLS; the login is `user` and `pass`). */
  url: string;
  user: string;
  pass: string;
  /** Appends a mail over IMAP (as a mail server delivering it would), telling IDLE sessions. */
  append(raw: string | Buffer, folder?: string): Promise<number>;
  /** The mails of a folder as the server holds them. */
  messages(folder?: string): HoodiecrowMessage[];
  /** Renumbers a folder as a server rebuilding its index does: a new UIDVALIDITY, new UIDs. */
  renumber(folder: string, uidValidity: number): void;
  /** Ends every client connection (a server restart, a network cut). */
  dropConnections(): void;
  close(): Promise<void>;
}

/**
 * A real IMAP server in the test process (hoodiecrow-imap, IMAP4rev1 with IDLE, SPECIAL-USE
 * and UIDPLUS), holding its mails in memory: an INBOX and a `Sent` folder marked `\Sent`.
 * `initial` mails are in the INBOX from the start.
 */
export async function startImapServer(options: { initial?: string[] } = {}): Promise<FakeImap> {
  const user = 'support@mailbox.test';
  const pass = 'app-password-0123';
  const server = hoodiecrow({
    plugins: ['IDLE', 'UIDPLUS', 'SPECIAL-USE'],
    users: { [user]: { password: pass } },
    storage: {
      INBOX: { messages: (options.initial ?? []).map((raw) => ({ raw, flags: [] })) },
      '': { separator: '/', folders: { Sent: { 'special-use': '\\Sent', messages: [] } } },
    },
  });
  const sockets = new Set<Socket>();
  server.server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.server.address() as AddressInfo;
  const url = `imap://127.0.0.1:${port}`;
  const mailbox = (folder: string) => {
    const box = server.getMailbox(folder);
    if (!box) throw new Error(`no folder ${folder}`);
    return box;
  };
  return {
    url,
    user,
    pass,
    async append(raw, folder = 'INBOX') {
      const client = new ImapFlow({ host: '127.0.0.1', port, secure: false, auth: { user, pass }, logger: false });
      await client.connect();
      try {
        const res = await client.append(folder, raw);
        return res && typeof res === 'object' && res.uid ? res.uid : 0;
      } finally {
        await client.logout();
      }
    },
    messages: (folder = 'INBOX') => mailbox(folder).messages,
    renumber(folder, uidValidity) {
      const box = mailbox(folder);
      box.uidvalidity = uidValidity;
      box.messages.forEach((m, i) => {
        m.uid = i + 1;
      });
      box.uidnext = box.messages.length + 1;
    },
    dropConnections() {
      for (const s of sockets) s.destroy();
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
