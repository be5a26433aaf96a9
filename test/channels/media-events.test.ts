import { describe, expect, it } from 'vitest';
import { adapters } from '../../src/channels/index.js';
import { fixture } from '../helpers/webhooks.js';

/**
 * Media messages as the providers document them (test/fixtures/webhooks/): each becomes a
 * message whose text is its caption (empty when none) and whose files are attachments with
 * the source the fetch-media job reads them from.
 */
const normalise = (key: keyof typeof adapters, payload: unknown) => adapters[key].normalise(payload, { verification: 'signed' });
const message = (key: keyof typeof adapters, name: string) => normalise(key, JSON.parse(fixture(key, name)))[0];

describe('whatsapp: image, audio (voice note), video, document and sticker messages', () => {
  it('names the media id; a caption is the text, no caption is empty text', () => {
    expect(message('whatsapp', 'image-message.json')).toMatchObject({
      text: 'This one',
      attachments: [{ kind: 'image', contentType: 'image/jpeg', source: { from: 'whatsapp_media', mediaId: '1003383421387256' } }],
    });
    expect(message('whatsapp', 'audio-message.json')).toMatchObject({
      text: '',
      attachments: [
        { kind: 'audio', contentType: 'audio/ogg; codecs=opus', source: { from: 'whatsapp_media', mediaId: '1908647269898587' } },
      ],
    });
    expect(message('whatsapp', 'video-message.json')).toMatchObject({
      text: 'Here is how it moves',
      attachments: [{ kind: 'video', contentType: 'video/mp4', source: { from: 'whatsapp_media', mediaId: '1166846181421424' } }],
    });
    expect(message('whatsapp', 'sticker-message.json')).toMatchObject({
      text: '',
      attachments: [{ kind: 'sticker', contentType: 'image/webp', source: { from: 'whatsapp_media', mediaId: '1228094408312460' } }],
    });
  });

  it('a document is a file and keeps its filename', () => {
    expect(message('whatsapp', 'document-message.json')).toMatchObject({
      text: 'Invoice for March',
      attachments: [
        {
          kind: 'file',
          contentType: 'application/pdf',
          filename: 'invoice-march.pdf',
          source: { from: 'whatsapp_media', mediaId: '1090380182768495' },
        },
      ],
    });
  });

  it('a text message has no attachments; a type with no file keeps its placeholder', () => {
    expect(message('whatsapp', 'text-message.json')).not.toHaveProperty('attachments');
    const location = JSON.parse(fixture('whatsapp', 'image-message.json'));
    const m = location.entry[0].changes[0].value.messages[0];
    delete m.image;
    m.type = 'location';
    m.location = { latitude: 1, longitude: 2 };
    expect(normalise('whatsapp', location)[0]).toMatchObject({ text: '[location]' });
    expect(normalise('whatsapp', location)[0]).not.toHaveProperty('attachments');
  });
});

describe('messenger / instagram: attachments[].payload.url', () => {
  for (const key of ['social_one.native', 'social_two.native'] as const) {
    it(`${key}: an image and a sticker are fetched from the CDN without credentials`, () => {
      expect(normalise(key, JSON.parse(fixture('social_one.native', 'message-image.json')))[0]).toMatchObject({
        text: '',
        attachments: [
          {
            kind: 'image',
            source: { from: 'url', url: expect.stringMatching(/^https:\/\/scontent\.xx\.fbcdn\.net\/.*photo\.jpg/), auth: 'none' },
          },
        ],
      });
      expect(normalise(key, JSON.parse(fixture('social_one.native', 'message-sticker.json')))[0]).toMatchObject({
        text: '',
        attachments: [{ kind: 'sticker', source: { from: 'url', auth: 'none' } }],
      });
    });
  }

  it('an attachment without a file (a location) stays in the text', () => {
    const body = JSON.parse(fixture('social_one.native', 'message-image.json'));
    body.entry[0].messaging[0].message.attachments.push({ type: 'location', payload: { coordinates: { lat: 1, long: 2 } } });
    expect(normalise('social_one.native', body)[0]).toMatchObject({ text: '[location]', attachments: [{ kind: 'image' }] });
  });
});

describe('e-mail: files inside the delivery', () => {
  it('the neutral format takes attachments[] with base64 content, by index', () => {
    const body = JSON.parse(fixture('email', 'inbound.json'));
    body.events[0].attachments = [
      { filename: 'photo.png', contentType: 'image/png', content: Buffer.from('png').toString('base64') },
      { filename: 'notes.txt', contentType: 'text/plain', content: Buffer.from('hello').toString('base64') },
    ];
    const [event] = normalise('email', body);
    expect(event).toMatchObject({
      text: 'Hi, the invoice for October shows two line items for the same order.',
      attachments: [
        { kind: 'image', filename: 'photo.png', contentType: 'image/png', source: { from: 'delivery', index: 0 } },
        { kind: 'file', filename: 'notes.txt', contentType: 'text/plain', source: { from: 'delivery', index: 1 } },
      ],
    });
  });

  it('an attachment without content cannot be read', () => {
    const body = JSON.parse(fixture('email', 'inbound.json'));
    body.events[0].attachments = [{ filename: 'photo.png' }];
    expect(() => normalise('email', body)).toThrow(/attachments\[0\]\.content/);
  });
});
