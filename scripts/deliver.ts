// `npm run deliver -- <integration key> [options]`: posts one customer message to a running
// service exactly as the provider would, signed with the secret the service itself is
// configured with (INBOX_INTEGRATIONS, from the environment or .env), so a newcomer gets test
// conversations in without a provider account. Prints the service's answer.
//   npm run deliver -- whatsapp --account 106540352242922 --from 16505551234 --name Sheena --text "Hello!"
//   npm run deliver -- sms.twilio --account +15557122661 --from +15017122661 --text "Hi there"
// whatsapp signs with `webhookSecret` (x-hub-signature-256); sms.twilio with `authToken` over
// INBOX_PUBLIC_URL + /webhooks/sms.twilio (X-Twilio-Signature), as Twilio does.
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { whatsappTextBody } from '../harness/whatsapp-delivery.js';
import { formParams, twilioSignature } from '../src/channels/sms-twilio.js';
import { applyDotEnv, ConfigError, loadConfig } from '../src/config.js';
import { hmacSha256Hex } from '../src/crypto/hmac.js';

const USAGE = `usage: npm run deliver -- whatsapp|sms.twilio --account ID --from ID [--name NAME] [--text TEXT] [--url BASE]
  --account  the connected account: the WhatsApp phone-number id, or the Twilio number (E.164)
  --from     the customer: a WhatsApp id (digits), or a phone number (E.164)
  --url      the service's base URL (default: INBOX_PUBLIC_URL, else http://HOST:PORT)`;

function fail(message: string): never {
  process.stderr.write(`deliver: ${message}\n${USAGE}\n`);
  process.exit(64);
}

interface Delivery {
  path: string;
  headers: Record<string, string>;
  body: string;
}

function whatsapp(secret: string | undefined, o: { account: string; from: string; name: string; text: string }): Delivery {
  if (!secret) fail('INBOX_INTEGRATIONS.whatsapp.webhookSecret is not set: the service would refuse the delivery');
  const body = whatsappTextBody({
    phoneNumberId: o.account,
    from: o.from,
    name: o.name,
    id: `wamid.${randomBytes(12).toString('hex')}`,
    text: o.text,
  });
  return {
    path: '/webhooks/whatsapp',
    headers: { 'content-type': 'application/json', 'x-hub-signature-256': `sha256=${hmacSha256Hex(secret, body)}` },
    body,
  };
}

function twilio(authToken: string | undefined, publicUrl: string, o: { account: string; from: string; text: string }): Delivery {
  if (!authToken) fail('INBOX_INTEGRATIONS["sms.twilio"].authToken is not set: the service would refuse the delivery');
  const sid = `SM${randomBytes(16).toString('hex')}`;
  const body = new URLSearchParams({
    MessageSid: sid,
    SmsSid: sid,
    AccountSid: `AC${'0'.repeat(32)}`,
    From: o.from,
    To: o.account,
    Body: o.text,
    NumMedia: '0',
    SmsStatus: 'received',
    ApiVersion: '2010-04-01',
  }).toString();
  // Twilio signs the URL it was configured with: the service checks against INBOX_PUBLIC_URL.
  const signature = twilioSignature(authToken, `${publicUrl}/webhooks/sms.twilio`, formParams(body));
  return {
    path: '/webhooks/sms.twilio',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'x-twilio-signature': signature },
    body,
  };
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    account: { type: 'string' },
    from: { type: 'string' },
    name: { type: 'string', default: 'Test Customer' },
    text: { type: 'string', default: 'Hello! This is a test message.' },
    url: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  },
});
if (values.help) {
  process.stdout.write(`${USAGE}\n`);
  process.exit(0);
}
const [key] = positionals;
if (values.account === undefined || values.from === undefined) fail('--account and --from are required');
let config: ReturnType<typeof loadConfig>;
try {
  applyDotEnv();
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) fail(`the configuration does not load:\n  ${err.problems.join('\n  ')}`);
  throw err;
}
const base = (values.url ?? config.publicUrl).replace(/\/+$/, '');
const options = { account: values.account, from: values.from, name: values.name, text: values.text };
const delivery =
  key === 'whatsapp'
    ? whatsapp(config.integrations.whatsapp?.webhookSecret, options)
    : key === 'sms.twilio'
      ? twilio(config.integrations['sms.twilio']?.authToken, config.publicUrl, options)
      : fail(`unknown integration key ${JSON.stringify(key ?? '')}`);

const res = await fetch(`${base}${delivery.path}`, { method: 'POST', headers: delivery.headers, body: delivery.body });
process.stdout.write(`${res.status} ${await res.text()}\n`);
process.exit(res.ok ? 0 : 1);
