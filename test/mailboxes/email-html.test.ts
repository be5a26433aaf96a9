import { describe, expect, it } from 'vitest';
import { htmlToText, MAX_MAIL_HTML, sanitizeMailHtml } from '../../src/channels/email-html.js';
import { inboundMailEvent } from '../../src/channels/email-inbound.js';

describe('an inbound mail HTML part', () => {
  it('keeps allowed styles and drops every property or value that could load or run something', () => {
    const clean = sanitizeMailHtml(
      '<div style="color:#333;background:url(https://t.test/x);width:expression(alert(1));font-weight:bold;position:fixed">hi</div>',
    );
    expect(clean).toBe('<div style="color:#333;font-weight:bold">hi</div>');
  });

  it('holds back protocol-relative images, keeps data: images, and drops a forged data-remote-src of a data: image', () => {
    expect(sanitizeMailHtml('<img src="//t.test/p.gif">')).toBe('<img data-remote-src="//t.test/p.gif" />');
    expect(sanitizeMailHtml('<img src="data:image/png;base64,iVBORw0KGgo=">')).toBe('<img src="data:image/png;base64,iVBORw0KGgo=" />');
    expect(sanitizeMailHtml('<img src="javascript:alert(1)">')).toBe('<img />');
  });

  it('keeps a cid: image as a data-cid marker (percent-decoded), never one written in the mail, nor an id with quotes', () => {
    expect(sanitizeMailHtml('<img src="cid:logo%40acme.test" alt="l">')).toBe('<img alt="l" data-cid="logo@acme.test" />');
    expect(sanitizeMailHtml('<img data-cid="logo@acme.test" src="data:image/png;base64,iVBORw0KGgo=">')).toBe(
      '<img src="data:image/png;base64,iVBORw0KGgo=" />',
    );
    expect(sanitizeMailHtml('<p data-cid="x">a</p>')).toBe('<p>a</p>');
    expect(sanitizeMailHtml('<img src="cid:a%22%20onerror=%22x" alt="q">')).toBe('<img alt="q" />');
    // A % that encodes nothing is read as written.
    expect(sanitizeMailHtml('<img src="cid:50%off@x.test" alt="p">')).toBe('<img alt="p" data-cid="50%off@x.test" />');
  });

  it('marks the quoted history of Gmail, Apple Mail, Thunderbird and Outlook, never a mark the mail wrote', () => {
    const gmail =
      '<div dir="ltr">Still broken.</div><br><div class="gmail_quote"><div dir="ltr" class="gmail_attr">On Mon, Acme wrote:<br></div>' +
      '<blockquote class="gmail_quote" style="margin:0px 0px 0px 0.8ex">Your order shipped.</blockquote></div>';
    expect(sanitizeMailHtml(gmail)).toBe(
      '<div dir="ltr">Still broken.</div><br /><div data-quoted="block"><div dir="ltr">On Mon, Acme wrote:<br /></div>' +
        '<blockquote style="margin:0px 0px 0px 0.8ex" data-quoted="block">Your order shipped.</blockquote></div>',
    );
    expect(sanitizeMailHtml('<p>Yes.</p><div class="moz-cite-prefix">On Mon:</div><blockquote type="cite">Old</blockquote>')).toBe(
      '<p>Yes.</p><div data-quoted="block">On Mon:</div><blockquote data-quoted="block">Old</blockquote>',
    );
    expect(sanitizeMailHtml('<p>Ok.</p><div id="appendonsend"></div><hr><div id="divRplyFwdMsg">From: Acme</div><div>Old</div>')).toBe(
      '<p>Ok.</p><div data-quoted="from"></div><hr /><div data-quoted="from">From: Acme</div><div>Old</div>',
    );
    // A quotation the writer made (no client's mark) is the reply itself; a forged mark goes.
    expect(sanitizeMailHtml('<blockquote>As you said</blockquote><p data-quoted="block">Hidden?</p>')).toBe(
      '<blockquote>As you said</blockquote><p>Hidden?</p>',
    );
  });

  it('keeps no HTML that shows nothing, nor more than the limit', () => {
    expect(sanitizeMailHtml('<script>alert(1)</script><style>p{}</style>')).toBeUndefined();
    expect(sanitizeMailHtml(`<p>${'x'.repeat(MAX_MAIL_HTML)}</p>`)).toBeUndefined();
  });

  it('gives a mail without a plain part the text of its HTML, entities read once', () => {
    expect(htmlToText('<p>Fish &amp;amp; chips &lt;3</p><p>Line<br>break</p><script>x()</script>')).toBe(
      'Fish &amp; chips <3\n\nLine\nbreak',
    );
    const event = inboundMailEvent({
      to: 'help@x.test',
      messageId: '<h@x.test>',
      from: { email: 'a@x.test' },
      body: '',
      html: '<p>Only HTML here.</p>',
    });
    expect(event.text).toBe('Only HTML here.');
    expect(event.html).toBe('<p>Only HTML here.</p>');
  });
});
