import type { AttachmentKind } from '../messaging/events.js';

/** The attachment kind of a declared MIME type: image, audio or video by its top level, else a file. */
export function kindOfType(mimeType: string | undefined): AttachmentKind {
  const kind = mimeType?.split('/')[0]?.toLowerCase();
  return kind === 'image' || kind === 'video' || kind === 'audio' ? kind : 'file';
}

/**
 * A medium the service cannot fetch (a provider that sent no address for it) stands in as a
 * short text: `[image]`, `[video]`, `[audio]` or `[file]` by MIME type, followed by the
 * caption when there is one.
 */
export function mediaPlaceholder(mimeType: string | undefined): string {
  return `[${kindOfType(mimeType)}]`;
}

/** Placeholders and caption joined by spaces, the empty ones left out. */
export function withCaption(placeholders: readonly string[], caption: string | undefined): string {
  return [...placeholders, caption ?? ''].filter((part) => part !== '').join(' ');
}
