import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeImap, startImapServer } from '../../harness/imap.js';
import { MailboxReaders } from '../../src/mailboxes/mailbox-readers.js';
import { useTestContext } from '../helpers/app.js';
import { makeTenant } from '../helpers/factories.js';
import { connectImapMailbox } from '../helpers/mailboxes.js';
import { waitFor } from '../helpers/webhooks.js';

// Mails as senders really write them, and as attackers do. Every one must end as a stored row
// that is processed (or failed with a reason), and the mail after all of them must still arrive.

/** A mail of `headers` and `body` (each line as written), CRLF throughout. */
function mail(id: string, headers: string[], body: string[]): string {
  return [`Message-ID: <${id}@hostile.test>`, 'Date: Thu, 26 Nov 2026 10:00:00 +0000', 'MIME-Version: 1.0', ...headers, '', ...body].join(
    '\r\n',
  );
}
const from = (who = 'mo@hostile.test') => `From: ${who}`;
/** A header line's UTF-8 bytes, one character each. */
const utf8Bytes = (line: string) => Buffer.from(line, 'utf8').toString('latin1');
const to = 'To: support@mailbox.test';

/** Bytes as quoted-printable: the mail stays 7-bit on the wire whatever charset its text is in. */
const qp = (bytes: Buffer) =>
  [...bytes]
    .map((b) => (b >= 0x21 && b <= 0x7e && b !== 0x3d ? String.fromCharCode(b) : `=${b.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
/** Base64 in 76-character lines, as mail writers fold it. */
const base64Lines = (bytes: Buffer) => bytes.toString('base64').match(/.{1,76}/g) ?? [];

const shiftJis = Buffer.from('93fa967b8cea82cc8365835883678ec0', 'hex'); // 日本語のテスト実
const limitFile = randomBytes(25 * 1024 * 1024);
const overFile = randomBytes(25 * 1024 * 1024 + 1);

/** A multipart nested `depth` levels deep, a text part at the bottom. */
function nested(depth: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < depth; i++) lines.push(`--b${i}`, `Content-Type: multipart/mixed; boundary="b${i + 1}"`, '');
  lines.push(`--b${depth}`, 'Content-Type: text/plain; charset=utf-8', '', 'At the bottom.');
  for (let i = depth; i >= 0; i--) lines.push(`--b${i}--`);
  return lines;
}

function attachmentMail(id: string, file: Buffer): string {
  return mail(
    id,
    [from(), to, `Subject: ${id}`, 'Content-Type: multipart/mixed; boundary="f"'],
    [
      '--f',
      'Content-Type: text/plain; charset=utf-8',
      '',
      `The file is attached (${file.byteLength} bytes).`,
      '--f',
      `Content-Type: application/octet-stream; name="${id}.bin"`,
      'Content-Transfer-Encoding: base64',
      `Content-Disposition: attachment; filename="${id}.bin"`,
      '',
      ...base64Lines(file),
      '--f--',
    ],
  );
}

const mails = [
  mail(
    'latin1',
    [from(), to, 'Subject: latin1', 'Content-Type: text/plain; charset=ISO-8859-1', 'Content-Transfer-Encoding: quoted-printable'],
    [qp(Buffer.from('Caf\xe9 cr\xe8me, s\xfc\xdf.', 'latin1'))],
  ),
  mail(
    'cp1252',
    [from(), to, 'Subject: cp1252', 'Content-Type: text/plain; charset=windows-1252', 'Content-Transfer-Encoding: quoted-printable'],
    // 0x80 and 0x93/0x94 are control codes in ISO-8859-1 and the euro sign and quotes in Windows-1252.
    [qp(Buffer.from([0x93, ...Buffer.from('Quoted', 'latin1'), 0x94, 0x20, 0x80, 0x35]))],
  ),
  mail(
    'sjis',
    [from(), to, 'Subject: sjis', 'Content-Type: text/plain; charset=Shift_JIS', 'Content-Transfer-Encoding: base64'],
    [shiftJis.toString('base64')],
  ),
  mail(
    'unknown-charset',
    [from(), to, 'Subject: unknown', 'Content-Type: text/plain; charset=x-klingon-42', 'Content-Transfer-Encoding: quoted-printable'],
    [`Plain words survive ${qp(Buffer.from([0xe9]))}.`],
  ),
  mail(
    'rfc2047',
    [
      `From: =?ISO-8859-1?Q?Jos=E9_Mart=EDnez?= <jose@hostile.test>`,
      to,
      // A subject folded over two encoded words, one UTF-8 base64 and one UTF-8 Q.
      `Subject: =?UTF-8?B?${Buffer.from('Grüße aus ').toString('base64')}?=`,
      ` =?UTF-8?Q?K=C3=B6ln?=`,
      'Content-Type: text/plain; charset=utf-8',
    ],
    ['Hallo.'],
  ),
  // 8-bit headers: UTF-8 written as is, without encoded words (RFC 6532), as many clients do.
  // The server sends a string's characters as bytes, so the UTF-8 is spelled byte by byte.
  mail(
    'eight-bit',
    [utf8Bytes('From: Zoë Ünal <zoe@hostile.test>'), to, utf8Bytes('Subject: Grüße, Zoë'), 'Content-Type: text/plain; charset=utf-8'],
    ['Hallo.'],
  ),
  mail('nobody', [from(), to, 'Subject: nobody'], []),
  mail(
    'bad-boundary',
    [from(), to, 'Subject: bad boundary', 'Content-Type: multipart/mixed; boundary="declared"'],
    ['--other', 'Content-Type: text/plain', '', 'Text under a boundary nobody declared.', '--other--'],
  ),
  mail('deep', [from(), to, 'Subject: deep', 'Content-Type: multipart/mixed; boundary="b0"'], nested(100)),
  // A mail bomb: the parser stops at its bound on parts, and the mail fails with why.
  mail('bomb', [from(), to, 'Subject: bomb', 'Content-Type: multipart/mixed; boundary="b0"'], nested(2000)),
  mail(
    'html-only',
    [from(), to, 'Subject: html only', 'Content-Type: text/html; charset=utf-8'],
    [
      '<html><head><style>p{color:red}</style><script>steal()</script></head><body>',
      '<p onclick="steal()">Hello <b>agent</b>,</p><p>the order <a href="javascript:steal()">is late</a>.</p>',
      '<img src="https://tracker.test/pixel.gif"></body></html>',
    ],
  ),
  attachmentMail('at-limit', limitFile),
  attachmentMail('over-limit', overFile),
  mail('last', [from(), to, 'Subject: last', 'Content-Type: text/plain'], ['The mail after all of them.']),
];

const ctx = await useTestContext({ workers: true, env: { INBOX_ALLOW_PRIVATE_SMTP: 'true' } });
const db = ctx.deps.db;
const tenant = await makeTenant(ctx.deps);
let server: FakeImap;
let readers: MailboxReaders;
let connectionId: number;

beforeAll(async () => {
  server = await startImapServer({ initial: mails });
  connectionId = (await connectImapMailbox(ctx.app, tenant.headers, server, { name: 'Hostile mailbox' })).id;
  readers = new MailboxReaders(ctx.deps, { scanMs: 100, pollMs: 3_600_000 });
  readers.start();
}, 60_000);

afterAll(async () => {
  await readers?.stop();
  await server?.close();
});

/** The message a mail became, by its Message-ID. */
async function message(id: string, timeoutMs?: number) {
  return waitFor(
    () =>
      db
        .selectFrom('messages')
        .innerJoin('threads', 'threads.id', 'messages.thread_id')
        .select(['messages.id', 'messages.text', 'messages.html', 'messages.email'])
        .where('threads.connection_id', '=', connectionId)
        .where('messages.external_id', '=', `<${id}@hostile.test>`)
        .executeTakeFirst(),
    `the message of ${id}`,
    timeoutMs,
  );
}

describe('an email.imap mailbox full of hostile MIME', () => {
  it('stores every mail once, processes each, and the mail after them still arrives', async () => {
    // Two mails of 36 MB come before it.
    await message('last', 100_000);
    const rows = await waitFor(
      async () => {
        const { rows } = await sql<{ key: string; status: string; error: string | null }>`
          SELECT i.message_key AS key, w.status, w.last_error AS error FROM imap_messages i
          JOIN webhook_inbox w ON w.id = i.delivery_id WHERE i.connection_id = ${connectionId} ORDER BY i.uid`.execute(db);
        return rows.every((r) => r.status !== 'received') && rows;
      },
      'every mail processed',
      60_000,
    );
    // A mail that does not parse is known by a hash of its bytes.
    const bomb = `sha256:${createHash('sha256')
      .update(mails.find((m) => m.includes('<bomb@'))!)
      .digest('hex')}`;
    expect(rows.map((r) => r.key)).toEqual(mails.map((m) => (m.includes('<bomb@') ? bomb : /Message-ID: (<[^>]+>)/.exec(m)![1])));
    expect(rows.filter((r) => r.status !== 'processed')).toEqual([
      { key: bomb, status: 'failed', error: expect.stringContaining('the mail cannot be parsed: Max allowed child nodes exceeded') },
    ]);
  }, 120_000);

  it('decodes ISO-8859-1, Windows-1252 and Shift_JIS, and an unknown charset as best it can', async () => {
    expect((await message('latin1')).text).toBe('Café crème, süß.');
    expect((await message('cp1252')).text).toBe('“Quoted” €5');
    expect(new TextDecoder('shift_jis').decode(shiftJis)).toBe('日本語のテスト実');
    expect((await message('sjis')).text).toBe('日本語のテスト実');
    expect((await message('unknown-charset')).text).toMatch(/^Plain words survive .\.$/u);
  });

  it('reads RFC 2047 encoded words in From and Subject, and 8-bit headers as UTF-8', async () => {
    const m = await message('rfc2047');
    expect(m.email).toMatchObject({ subject: 'Grüße aus Köln', from: { email: 'jose@hostile.test', name: 'José Martínez' } });
    const eight = await message('eight-bit');
    expect(eight.email).toMatchObject({ subject: 'Grüße, Zoë', from: { email: 'zoe@hostile.test', name: 'Zoë Ünal' } });
  });

  it('keeps a mail with no body, one with a boundary nobody declared, and one nested 100 deep', async () => {
    expect((await message('nobody')).text).toBe('');
    expect((await message('bad-boundary')).text).toContain('Text under a boundary nobody declared.');
    expect((await message('deep')).text).toBe('At the bottom.');
  });

  it('gives an HTML-only mail the text of its HTML, and HTML without script, handlers or remote images', async () => {
    const m = await message('html-only');
    expect(m.text).toBe('Hello agent,\n\nthe order is late.');
    expect(m.html).not.toMatch(/script|style|onclick|steal|javascript|\ssrc="https:/);
    expect(m.html).toContain('data-remote-src="https://tracker.test/pixel.gif"');
  });

  it('stores a file at the attachment limit whole, and keeps the mail of a larger one with the file failed', async () => {
    const attachment = (id: string) =>
      waitFor(
        async () => {
          const m = await message(id);
          const row = await db
            .selectFrom('attachments')
            .select(['status', 'size', 'error', 'storage_key', 'filename'])
            .where('message_id', '=', m.id)
            .executeTakeFirst();
          return row && row.status !== 'pending' && row;
        },
        `the file of ${id}`,
        60_000,
      );
    const stored = await attachment('at-limit');
    expect(stored).toMatchObject({ status: 'stored', size: limitFile.byteLength, filename: 'at-limit.bin' });
    const hash = createHash('sha256');
    for await (const chunk of (await ctx.deps.storage.get(stored.storage_key!))!) hash.update(chunk);
    expect(hash.digest('hex')).toBe(createHash('sha256').update(limitFile).digest('hex'));
    const over = await attachment('over-limit');
    expect(over).toMatchObject({ status: 'failed', size: null, error: `too large: ${overFile.byteLength} bytes` });
    expect((await message('over-limit')).text).toBe(`The file is attached (${overFile.byteLength} bytes).`);
  }, 120_000);
});
