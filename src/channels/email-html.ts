import sanitizeHtml from 'sanitize-html';

/**
 * An inbound mail's HTML as the console may show it (docs/email.md, "What an agent sees"):
 * an allowlist of tags and attributes, no script, no form, no frame, styles limited to a list
 * of properties whose values cannot load anything. Remote images never load by themselves (a
 * pixel would tell the sender when and where the mail was read): their address moves to
 * `data-remote-src` and the console puts it back when the agent asks for images. An image of
 * the mail's own parts (`cid:`) keeps the part's Content-ID in `data-cid`, which the frame
 * links to that attachment of the same message (threads/email-frame.routes.ts). Links open
 * apart with `rel="noopener noreferrer"`, so the page they open cannot reach back.
 */
export function sanitizeMailHtml(html: string): string | undefined {
  const clean = sanitizeHtml(html, OPTIONS).trim();
  // A body of markup alone (a tracking pixel, empty tables) says nothing the text does not.
  if (clean === '' || clean.length > MAX_MAIL_HTML) return undefined;
  return clean;
}

/** Above this, a mail's HTML is not kept (its text still is): no reader shows more usefully. */
export const MAX_MAIL_HTML = 1_000_000;

/** The text of an HTML part, for a mail that has no plain one. */
export function htmlToText(html: string): string {
  const blocks = html.replace(/<(br|\/div|\/tr|\/li)\b[^>]*>/gi, '\n$&').replace(/<\/(p|h[1-6])\b[^>]*>/gi, '\n\n$&');
  return (
    sanitizeHtml(blocks, {
      allowedTags: [],
      allowedAttributes: {},
      nonTextTags: ['style', 'script', 'textarea', 'option', 'head', 'title'],
    })
      .replace(/&nbsp;/g, ' ')
      .replace(/&lt;/g, '<')
      .replace(/&gt;/g, '>')
      .replace(/&quot;/g, '"')
      .replace(/&#39;/g, "'")
      // Last, so `&amp;lt;` reads as the text `&lt;` it is.
      .replace(/&amp;/g, '&')
      .replace(/[ \t]+\n/g, '\n')
      .replace(/\n{3,}/g, '\n\n')
      .trim()
  );
}

/**
 * A part's Content-ID as the service keeps it (`attachments.source.cid`): without its angle
 * brackets, and only when it is made of the characters a Message-ID-like id uses (no quote,
 * `&`, `<`, `>` or space), so it is written into an attribute and matched as it is. Else none.
 */
export function cleanContentId(raw: unknown): string | undefined {
  if (typeof raw !== 'string') return undefined;
  const id = raw
    .trim()
    .replace(/^<(.*)>$/, '$1')
    .trim();
  return /^[A-Za-z0-9!#$%*+\-/=?^_`{|}~.@]{1,250}$/.test(id) ? id : undefined;
}

/**
 * The Content-ID a `cid:` URL names (RFC 2392: percent-encoded), when it is a clean one; a
 * `%` that encodes nothing is read as written, as mail writers that do not encode write it.
 */
function cidOf(src: string): string | undefined {
  const m = /^\s*cid:(\S+?)\s*$/i.exec(src);
  if (!m) return undefined;
  try {
    return cleanContentId(decodeURIComponent(m[1]!));
  } catch {
    return cleanContentId(m[1]);
  }
}

/** A style value that names no resource and runs nothing: no url(), expression(), or escapes. */
const PLAIN_VALUE = /^(?!.*(url|expression|image-set|var)\s*\()(?!.*[\\@<>])[#%.,()\s\w-]*$/i;

const STYLE_PROPERTIES = [
  'color',
  'background-color',
  'font-family',
  'font-size',
  'font-style',
  'font-weight',
  'line-height',
  'letter-spacing',
  'text-align',
  'text-decoration',
  'text-indent',
  'text-transform',
  'vertical-align',
  'white-space',
  'width',
  'max-width',
  'min-width',
  'height',
  'margin',
  'margin-top',
  'margin-right',
  'margin-bottom',
  'margin-left',
  'padding',
  'padding-top',
  'padding-right',
  'padding-bottom',
  'padding-left',
  'border',
  'border-top',
  'border-right',
  'border-bottom',
  'border-left',
  'border-color',
  'border-style',
  'border-width',
  'border-collapse',
  'border-radius',
  'display',
  'list-style-type',
];

const OPTIONS: sanitizeHtml.IOptions = {
  allowedTags: [
    ...sanitizeHtml.defaults.allowedTags,
    'img',
    'font',
    'center',
    'span',
    'del',
    'ins',
    'u',
    's',
    'sub',
    'sup',
    'small',
    'big',
  ],
  // Everything outside the list goes with its content where the content is code or a page.
  nonTextTags: ['style', 'script', 'textarea', 'option', 'noscript', 'head', 'title', 'iframe', 'object', 'embed', 'svg', 'math'],
  allowedAttributes: {
    '*': ['style', 'dir', 'lang', 'title', 'align', 'valign', 'width', 'height', 'bgcolor', 'color', 'data-quoted'],
    a: ['href', 'name', 'target', 'rel'],
    img: ['src', 'alt', 'data-remote-src', 'data-cid'],
    td: ['colspan', 'rowspan'],
    th: ['colspan', 'rowspan'],
    table: ['border', 'cellpadding', 'cellspacing'],
    font: ['face', 'size'],
    ol: ['start', 'type'],
  },
  allowedStyles: { '*': Object.fromEntries(STYLE_PROPERTIES.map((p) => [p, [PLAIN_VALUE]])) },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
  allowedSchemesByTag: { img: ['http', 'https', 'cid', 'data'] },
  allowProtocolRelative: false,
  transformTags: {
    // Runs after the tag's own transform below, on every tag.
    '*': (tagName, attribs) => {
      const { 'data-quoted': _forged, ...rest } = attribs;
      const quoted = quotedHistory(tagName, attribs);
      return { tagName, attribs: quoted ? { ...rest, 'data-quoted': quoted } : rest };
    },
    a: (tagName, attribs) => ({ tagName, attribs: { ...attribs, target: '_blank', rel: 'noopener noreferrer' } }),
    img: (tagName, attribs) => {
      // Both markers are the sanitizer's alone: one written in the mail is dropped.
      const { src, 'data-remote-src': _remote, 'data-cid': _cid, ...rest } = attribs;
      if (src && /^\s*(https?:)?\/\//i.test(src)) return { tagName, attribs: { ...rest, 'data-remote-src': src } };
      // cid: names a part of this mail: the frame links it to that attachment of the message.
      const cid = src ? cidOf(src) : undefined;
      if (cid) return { tagName, attribs: { ...rest, 'data-cid': cid } };
      // A data: image is inline already.
      return { tagName, attribs: src && /^\s*data:image\//i.test(src) ? { ...rest, src } : rest };
    },
  },
};

/**
 * Whether an element is the quoted history a mail client wrote below the reply, by the marks
 * the common clients leave (docs/email.md, "The console"): `block` for an element that holds
 * it (Gmail's and ProtonMail's quote, Apple Mail's and Thunderbird's `<blockquote
 * type="cite">`, Thunderbird's "… wrote:" line, Yahoo's), `from` for the element where it
 * starts and everything after it (Outlook's reply header and the marker before it). The frame
 * hides both until the agent asks for the quoted text. The mark is the sanitizer's alone: one
 * written in the mail is dropped.
 */
function quotedHistory(tagName: string, attribs: Record<string, string>): 'block' | 'from' | undefined {
  const classes = (attribs.class ?? '').split(/\s+/);
  if (classes.some((c) => QUOTE_CLASSES.has(c))) return 'block';
  if (tagName === 'blockquote' && attribs.type?.toLowerCase() === 'cite') return 'block';
  if (attribs.id === 'divRplyFwdMsg' || attribs.id === 'appendonsend') return 'from';
  return undefined;
}

const QUOTE_CLASSES = new Set(['gmail_quote', 'gmail_quote_container', 'protonmail_quote', 'moz-cite-prefix', 'yahoo_quoted']);
