import { useEffect, useState } from 'preact/hooks';
import type { MailAddress, Message } from '../../../packages/client/src/index';
import { session } from '../shared/session';
import { useStore } from '../shared/store';

/** The integration keys whose threads are e-mail (docs/email.md). */
export const isEmailThread = (integrationKey: string) => integrationKey === 'email' || integrationKey.startsWith('email.');

const addressText = (list: MailAddress[]) => list.map((a) => (a.name ? `${a.name} <${a.email}>` : a.email)).join(', ');

/**
 * An e-mail as its reader sees it: from, to, cc and subject; the HTML in a sandboxed frame
 * (remote images only after "Show images"), else the text; the quoted history behind
 * "Show quoted text" (folded in the frame when the HTML marks it, else the plain part's).
 */
export function EmailMessage({ m }: { m: Message & { email: NonNullable<Message['email']> } }) {
  const [quoted, setQuoted] = useState(false);
  const [images, setImages] = useState(false);
  const [height, setHeight] = useState(160);
  const [link, setLink] = useState<string | null>(null);
  const s = useStore(session)!;
  const { email } = m;
  // The frame loads the HTML from a page with its own CSP (a srcdoc frame would inherit the
  // console's): by a short-lived link, since a frame cannot send the agent's token.
  useEffect(() => {
    if (!m.html) return;
    let live = true;
    s.client
      .messageHtmlLink(m.id)
      .then((l) => live && setLink(l.url))
      .catch(() => live && setLink(null));
    return () => {
      live = false;
    };
  }, [m.id, m.html]);
  const hasRemote = m.html ? m.html.includes('data-remote-src=') : false;
  // The frame folds the quoted history the sanitizer marked in the HTML, where the plain part
  // had some too (a forward is not folded): the button unfolds it there (quotedText would say
  // it twice).
  const foldsQuoted = link !== null && !!m.quotedText && !!m.html?.includes(' data-quoted=');
  const frameSrc = link && `${link}${images ? '&images=1' : ''}${foldsQuoted && quoted ? '&quoted=1' : ''}`;
  return (
    <div class="email">
      <dl class="email-headers">
        {email.subject && (
          <>
            <dt>Subject</dt>
            <dd class="email-subject">{email.subject}</dd>
          </>
        )}
        <dt>From</dt>
        <dd>{addressText([email.from])}</dd>
        {email.to.length > 0 && (
          <>
            <dt>To</dt>
            <dd>{addressText(email.to)}</dd>
          </>
        )}
        {email.cc.length > 0 && (
          <>
            <dt>Cc</dt>
            <dd>{addressText(email.cc)}</dd>
          </>
        )}
        {email.bcc && email.bcc.length > 0 && (
          <>
            <dt>Bcc</dt>
            <dd>{addressText(email.bcc)}</dd>
          </>
        )}
      </dl>
      {m.html && link ? (
        <>
          <iframe
            class="email-html"
            title={`E-mail: ${email.subject ?? 'no subject'}`}
            sandbox="allow-popups allow-popups-to-escape-sandbox"
            referrerpolicy="no-referrer"
            src={frameSrc ?? undefined}
            // Without allow-same-origin the frame's height cannot be read: the agent grows it.
            style={{ height: `${height}px` }}
          />
          <div class="email-tools">
            {hasRemote && !images && (
              <button type="button" class="link" onClick={() => setImages(true)}>
                Show images
              </button>
            )}
            <button type="button" class="link" onClick={() => setHeight((h) => h + 320)}>
              Taller
            </button>
          </div>
        </>
      ) : (
        m.text && <p class="text">{m.text}</p>
      )}
      {m.quotedText && (
        <>
          <button type="button" class="link" aria-expanded={quoted} onClick={() => setQuoted(!quoted)}>
            {quoted ? 'Hide quoted text' : 'Show quoted text'}
          </button>
          {quoted && !foldsQuoted && <pre class="email-quoted">{m.quotedText}</pre>}
        </>
      )}
    </div>
  );
}
