import type { SystemMail } from './system-mailer.js';

/**
 * The service's own mails: one layout for every "press this button" message (an invite, a
 * password reset). The plain-text part says everything the HTML part says, so a text-only
 * reader loses nothing; every value from a user (a name, a workspace's name) is escaped.
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
    workspace: escapeHtml(m.workspaceName),
    heading: escapeHtml(m.heading),
    intro: escapeHtml(m.intro),
    button: escapeHtml(m.buttonLabel),
    url: escapeHtml(m.url),
    expiry: escapeHtml(m.expiry),
    why: escapeHtml(m.why),
  };
  // Tables and inline styles: what every mail reader renders the same way.
  const html = `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width"><title>${escapeHtml(m.subject)}</title></head>
<body style="margin:0;padding:0;background:#f4f5f7;font-family:-apple-system,BlinkMacSystemFont,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;color:#1f2933">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="background:#f4f5f7;padding:32px 12px">
<tr><td align="center">
<table role="presentation" width="100%" cellpadding="0" cellspacing="0" style="max-width:520px;background:#ffffff;border-radius:8px;border:1px solid #e4e7eb">
<tr><td style="padding:20px 32px;border-bottom:1px solid #e4e7eb;font-size:14px;color:#52606d"><strong style="color:#1f2933">${e.workspace}</strong> · ${PRODUCT_NAME}</td></tr>
<tr><td style="padding:28px 32px 8px">
<h1 style="margin:0 0 16px;font-size:20px;line-height:28px">${e.heading}</h1>
<p style="margin:0 0 24px;font-size:15px;line-height:22px">${e.intro}</p>
<table role="presentation" cellpadding="0" cellspacing="0"><tr><td style="border-radius:6px;background:#2563eb">
<a href="${e.url}" style="display:inline-block;padding:12px 22px;font-size:15px;font-weight:600;color:#ffffff;text-decoration:none">${e.button}</a>
</td></tr></table>
<p style="margin:24px 0 0;font-size:13px;line-height:20px;color:#52606d">This link works once and expires ${e.expiry}. If the button does not work, copy this address into your browser:<br><a href="${e.url}" style="color:#2563eb;word-break:break-all">${e.url}</a></p>
</td></tr>
<tr><td style="padding:20px 32px 28px;font-size:12px;line-height:18px;color:#7b8794">${e.why}</td></tr>
</table>
</td></tr>
</table>
</body>
</html>
`;
  return { to: m.to, subject: m.subject, text, html };
}
