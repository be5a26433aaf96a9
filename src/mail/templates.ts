import type { SystemMail } from './system-mailer.js';

/**
 * The service's own mails, in one layout: a "press this button" message (an invite, a
 * password reset) or a list of things that happened, each with its link (notifications). The
 * plain-text part says everything the HTML part says, so a text-only reader loses nothing;
 * every value from a user (a name, a workspace's name) is escaped.
 */
export interface ActionMail {
  to: string;
  subject: string;
  /** The workspace the mail is about, shown as its sender's name in the header. */
  workspaceName: string;
  heading: string;
  /** One or two sentences: what happened and what the button does. */
  intro: string;
  buttonLabel: string;
  url: string;
  /** When the link stops working, in words ("in 1 hour"). */
  expiry: string;
  /** Why the reader got this mail and what to do when it was not them. */
  why: string;
}

export const PRODUCT_NAME = 'Inbox';

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

export function renderActionMail(m: ActionMail): SystemMail {
  const text = [
    `${m.workspaceName} · ${PRODUCT_NAME}`,
    '',
    m.heading,
    '',
    m.intro,
    '',
    `${m.buttonLabel}:`,
    m.url,
    '',
    `This link works once and expires ${m.expiry}.`,
    '',
    '--',
    m.why,
  ].join('\n');
  const e = {
    heading: escapeHtml(m.heading),
    intro: escapeHtml(m.intro),
    url: escapeHtml(m.url),
    expiry: escapeHtml(m.expiry),
  };
  const body = `<h1 style="margin:0 0 16px;font-size:20px;line-height:28px">${e.heading}</h1>
<p style="margin:0 0 24px;font-size:15px;line-height:22px">${e.intro}</p>
${button(m.buttonLabel, m.url)}
<p style="margin:24px 0 0;font-size:13px;line-height:20px;color:#52606d">This link works once and expires ${e.expiry}. If the button does not work, copy this address into your browser:<br><a href="${e.url}" style="color:#2563eb;word-break:break-all">${e.url}</a></p>`;
  const html = layout(m.subject, m.workspaceName, body, m.why);
  return { to: m.to, subject: m.subject, text, html };
}

/** A list of things that happened, each with a link to where it happened. */
export interface ListMail {
  to: string;
  subject: string;
  workspaceName: string;
  heading: string;
  items: { title: string; detail?: string; url: string }[];
  /** The one button under the list (the console). */
  buttonLabel: string;
  url: string;
  why: string;
}

export function renderListMail(m: ListMail): SystemMail {
  const text = [
    `${m.workspaceName} · ${PRODUCT_NAME}`,
    '',
    m.heading,
    '',
    ...m.items.flatMap((i) => [`- ${i.title}`, ...(i.detail === undefined ? [] : [`  ${i.detail}`]), `  ${i.url}`, '']),
    `${m.buttonLabel}:`,
    m.url,
    '',
    '--',
    m.why,
  ].join('\n');
  const items = m.items
    .map(
      (i) => `<tr><td style="padding:12px 0;border-top:1px solid #e4e7eb;font-size:15px;line-height:22px">
<a href="${escapeHtml(i.url)}" style="color:#1f2933;font-weight:600;text-decoration:none">${escapeHtml(i.title)}</a>${
        i.detail === undefined ? '' : `<br><span style="font-size:14px;color:#52606d">${escapeHtml(i.detail)}</span>`
      }
</td></tr>`,
    )
    .join('\n');
  const body = `<h1 style="margin:0 0 16px;font-size:20px;line-height:28px">${escapeHtml(m.heading)}</h1>
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="margin:0 0 24px">
${items}
</table>
${button(m.buttonLabel, m.url)}`;
  return { to: m.to, subject: m.subject, text, html: layout(m.subject, m.workspaceName, body, m.why) };
}

function button(label: string, url: string): string {
  return `<table role="presentation" cellpadding="0" cellspacing="0"><tr><td style="border-radius:6px;background:#2563eb">
<a href="${escapeHtml(url)}" style="display:inline-block;padding:12px 22px;font-size:15px;font-weight:600;color:#ffffff;text-decoration:none">${escapeHtml(label)}</a>
</td></tr></table>`;
}

/** The page around a mail's body: tables and inline styles, what every mail reader renders the same way. */
function layout(subject: string, workspaceName: string, body: string, why: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(subject)}</title></head>
<body style="margin:0;padding:0;background:#f4f5f7;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2933">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7;padding:32px 12px">
<tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:520px;background:#ffffff;border-radius:8px;border:1px solid #e4e7eb">
<tr><td style="padding:20px 32px;border-bottom:1px solid #e4e7eb;font-size:14px;color:#52606d"><strong style="color:#1f2933">${escapeHtml(workspaceName)}</strong> · ${PRODUCT_NAME}</td></tr>
<tr><td style="padding:28px 32px 8px">
${body}
</td></tr>
<tr><td style="padding:20px 32px 28px;font-size:12px;line-height:18px;color:#7b8794">${escapeHtml(why)}</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`;
}
