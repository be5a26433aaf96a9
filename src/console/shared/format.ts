/** How the console writes times, channels and people. */

const CHANNELS: Record<string, string> = {
  whatsapp: 'WhatsApp',
  'whatsapp_session.waha': 'WhatsApp (WAHA)',
  whatsapp_session: 'WhatsApp session',
  'social_one.native': 'Messenger',
  'social_two.native': 'Instagram',
  social_one: 'Messenger',
  social_two: 'Instagram',
  aggregator: 'Aggregator',
  sms: 'SMS',
  'sms.twilio': 'SMS',
  email: 'E-mail',
  'email.postmark': 'E-mail',
  'email.mailgun': 'E-mail',
  'email.imap': 'E-mail mailbox',
  livechat: 'Live chat',
  telegram: 'Telegram',
};

export const channelName = (integrationKey: string) => CHANNELS[integrationKey] ?? integrationKey;

const timeFormat = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
const dayFormat = new Intl.DateTimeFormat(undefined, { day: 'numeric', month: 'short' });
const fullFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });

/** Today: the time; earlier: the day. */
export function shortTime(iso: string, now = new Date()): string {
  const d = new Date(iso);
  return d.toDateString() === now.toDateString() ? timeFormat.format(d) : dayFormat.format(d);
}

export const fullTime = (iso: string) => fullFormat.format(new Date(iso));

/** Seconds as "2 minutes" / "40 seconds" for messages such as "try again in …". */
export function duration(seconds: number): string {
  if (seconds < 60) return `${seconds} second${seconds === 1 ? '' : 's'}`;
  const minutes = Math.ceil(seconds / 60);
  return `${minutes} minute${minutes === 1 ? '' : 's'}`;
}

/** Bytes as "820 B", "14 KB", "2.4 MB". */
export function fileSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/** A span of milliseconds as "1 h 5 min" / "25 min" / "40 s", for SLA time left. */
export function span(ms: number): string {
  const s = Math.round(Math.abs(ms) / 1000);
  if (s < 60) return `${s} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} min`;
  const h = Math.floor(m / 60);
  if (h < 48) return m % 60 === 0 ? `${h} h` : `${h} h ${m % 60} min`;
  return `${Math.floor(h / 24)} d`;
}

/**
 * What a thread's SLA badge says (docs/sla.md): the nearest running due time as time left, or
 * how long ago it passed; null without a clock running and nothing breached.
 */
export function slaBadge(
  sla: { firstResponseDueAt: string | null; nextResponseDueAt: string | null; resolutionDueAt: string | null; status: string } | null,
  now = Date.now(),
): { text: string; status: string } | null {
  if (!sla) return null;
  const dues = [sla.firstResponseDueAt, sla.nextResponseDueAt, sla.resolutionDueAt].filter((d): d is string => d !== null).map(Date.parse);
  if (dues.length === 0) return sla.status === 'breached' ? { text: 'SLA breached', status: 'breached' } : null;
  const left = Math.min(...dues) - now;
  return left >= 0 ? { text: `SLA ${span(left)} left`, status: sla.status } : { text: `SLA ${span(left)} overdue`, status: 'breached' };
}

/** Named things (macros) as a menu lists them: by name, then oldest first. */
export const byName = <T extends { name: string; id: number }>(list: T[]): T[] =>
  [...list].sort((a, b) => a.name.localeCompare(b.name) || a.id - b.id);
