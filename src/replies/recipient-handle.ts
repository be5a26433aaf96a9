import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { errors } from '../http/errors.js';
import { isSingleMailbox } from '../text/mailbox.js';

/**
 * The handle a new conversation's `to` becomes on a channel (docs/replies.md, "Starting a
 * conversation"): exactly the contact `externalId` that channel's inbound messages carry, so a
 * later message from that person joins the same contact and thread. WhatsApp ids are the
 * number's digits (Meta's `wa_id`, WAHA's chat id without `@c.us`); SMS and the aggregator
 * keep E.164 with its `+`; e-mail addresses are lower-cased.
 */
const HANDLES: Record<string, (to: string) => string> = {
  whatsapp: (to) => phone(to, { plusOptional: true }).slice(1),
  whatsapp_session: (to) => chatId(to),
  'whatsapp_session.waha': (to) => chatId(to),
  sms: (to) => phone(to, { plusOptional: false }),
  'sms.twilio': (to) => phone(to, { plusOptional: false }),
  aggregator: (to) => phone(to, { plusOptional: false }),
  email: emailAddress,
  'email.postmark': emailAddress,
  'email.mailgun': emailAddress,
  'email.imap': emailAddress,
};

/** Keys whose handles are WhatsApp ids (digits, no `+`). */
const WHATSAPP_IDS = new Set(['whatsapp', 'whatsapp_session', 'whatsapp_session.waha']);

/**
 * The other forms WhatsApp may know the same number by: Brazil's mobiles with and without the
 * ninth digit (55 11 98765-4321 / 55 11 8765-4321) and Mexico's with and without the 1 after 52.
 * Meta's `wa_id` can be either; a contact who wrote from one is found when the business writes
 * to the other. Brazil's eight digits are a mobile's only when they begin with 6 to 9: a
 * landline (2 to 5) with a 9 before it would be someone else's mobile. Empty for other
 * channels and numbers.
 */
export function handleVariants(integrationKey: string, handle: string): string[] {
  if (!WHATSAPP_IDS.has(integrationKey)) return [];
  const variants = [
    [/^55(\d{2})9([6-9]\d{7})$/, '55$1$2'],
    [/^55(\d{2})([6-9]\d{7})$/, '55$19$2'],
    [/^521(\d{10})$/, '52$1'],
    [/^52(\d{10})$/, '521$1'],
  ] as const;
  return variants.flatMap(([form, other]) => (form.test(handle) ? [handle.replace(form, other)] : []));
}

/** Why a channel absent from HANDLES cannot speak first. */
const CANNOT_START: Record<string, string> = {
  'social_one.native': 'Messenger only lets a page answer people who wrote to it first',
  'social_two.native': 'Instagram only lets an account answer people who wrote to it first',
  livechat: 'live chat visitors start their own conversations from the widget',
  telegram: 'a Telegram bot can only write to chats that wrote to it first',
  ai: 'this channel cannot send',
};

/** The normalised handle of `to` on `integrationKey`, or a 422 that names the problem. */
export function recipientHandle(integrationKey: string, to: string): string {
  const normalise = HANDLES[integrationKey];
  if (!normalise) {
    const why = CANNOT_START[integrationKey] ?? 'this channel cannot start a conversation';
    throw errors.validation(`${integrationKey} cannot start a conversation: ${why}`);
  }
  return normalise(to.trim());
}

/**
 * E.164 (`+` and the country code); WhatsApp ids are the same digits without the `+`. The
 * check is of the number's form (a country code and a length that country's numbers can
 * have), not of whether a carrier holds it today: fictional numbers (+1 555 01xx, Ofcom's
 * drama ranges) and newly opened ranges are numbers all the same.
 */
function phone(to: string, { plusOptional }: { plusOptional: boolean }): string {
  const digitsOnly = /^\d+$/.test(to);
  const parsed = to.startsWith('+') || (plusOptional && digitsOnly) ? parsePhoneNumberFromString(digitsOnly ? `+${to}` : to) : undefined;
  if (plusOptional && parsed && !parsed.isPossible()) {
    const mexican = mexicanWhatsappId(`+${parsed.countryCallingCode}${parsed.nationalNumber}`);
    if (mexican) return mexican;
  }
  if (!parsed?.isPossible())
    throw errors.validation(
      `"to" (${JSON.stringify(to.slice(0, 64))}) is not a phone number: give it in E.164, + and the country code (+14155550100)`,
    );
  return parsed.number;
}

/**
 * WhatsApp ids (Meta's `wa_id`, WAHA's chat ids) keep Mexico's mobiles as 52 1 + ten digits,
 * the form the numbering plan dropped in 2019 and libphonenumber no longer takes: such an id
 * (its ten digits a possible Mexican number) is kept as it is, since the person's messages
 * come from it.
 */
function mexicanWhatsappId(e164: string): string | undefined {
  const m = /^\+521(\d{10})$/.exec(e164);
  return m && parsePhoneNumberFromString(`+52${m[1]}`)?.isPossible() ? e164 : undefined;
}

/** A WAHA chat id: `<number>@c.us` (or `@s.whatsapp.net`) or a phone number → the digits; a group's `…@g.us` as it is. */
function chatId(to: string): string {
  if (/^[\d-]{5,64}@g\.us$/.test(to)) return to;
  return phone(to.replace(/@(c\.us|s\.whatsapp\.net)$/, ''), { plusOptional: true }).slice(1);
}

/**
 * A single mailbox `local@domain.tld`, as a provider's From header carries it; display
 * names, lists and address comments are refused rather than guessed at.
 */
function emailAddress(to: string): string {
  const address = to.toLowerCase();
  if (!isSingleMailbox(address)) throw errors.validation(`"to" (${JSON.stringify(to.slice(0, 64))}) is not an e-mail address`);
  return address;
}
