// A fake of every provider's send API (and, with --smtp-port, an SMTP server) for trying
// replies locally. Prints each request it receives, one JSON line each, and answers as the
// provider documents it. Point the integrations at it, e.g.
//   node --import tsx scripts/fake-provider.ts --port 4010 --smtp-port 2525
//   INBOX_INTEGRATIONS='{"whatsapp":{"apiBaseUrl":"http://127.0.0.1:4010/graph/v23.0","accessToken":"dev"}}'
// The credential headers are printed shortened: this is a dev tool, but logs travel.
import { parseArgs } from 'node:util';
import { startFakeProviders } from '../harness/fake-providers.js';
import { startSmtpServer } from '../harness/smtp.js';

const { values } = parseArgs({
  options: { port: { type: 'string', default: '4010' }, host: { type: 'string', default: '127.0.0.1' }, 'smtp-port': { type: 'string' } },
});
const port = Number(values.port);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  process.stderr.write('usage: fake-provider --port 4010 [--host 127.0.0.1] [--smtp-port 2525]\n');
  process.exit(64);
}

const shorten = (v: string | string[] | undefined) => (typeof v === 'string' ? `${v.slice(0, 12)}…` : undefined);

const fake = await startFakeProviders({
  port,
  host: values.host,
  onRequest(r) {
    const line = {
      provider: r.provider ?? 'unknown',
      method: r.method,
      path: r.path,
      authorization: shorten(r.headers.authorization),
      'x-api-key': shorten(r.headers['x-api-key']),
      body: r.parsed ?? r.body,
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  },
});
process.stderr.write('fake provider listening; apiBaseUrl for each integration:\n');
for (const [key, url] of Object.entries(fake.baseUrls)) process.stderr.write(`  ${key.padEnd(18)} ${url}\n`);

if (values['smtp-port'] !== undefined) {
  const smtp = await startSmtpServer({
    port: Number(values['smtp-port']),
    onMail(m) {
      const line = {
        provider: 'email',
        from: m.from,
        to: m.to,
        subject: m.mail.subject,
        inReplyTo: m.mail.inReplyTo,
        messageId: m.mail.messageId,
        text: m.mail.text,
      };
      process.stdout.write(`${JSON.stringify(line)}\n`);
    },
  });
  process.stderr.write(`  ${'email (smtpUrl)'.padEnd(18)} ${smtp.url}\n`);
}
