/**
 * Media stand in as a short text until attachments are fetched and stored: `[image]`,
 * `[video]`, `[audio]` or `[file]` by MIME type, followed by the caption when there is one.
 */
export function mediaPlaceholder(mimeType: string | undefined): string {
  const kind = mimeType?.split('/')[0]?.toLowerCase();
  return kind === 'image' || kind === 'video' || kind === 'audio' ? `[${kind}]` : '[file]';
}

/** Placeholders and caption joined by spaces, the empty ones left out. */
export function withCaption(placeholders: readonly string[], caption: string | undefined): string {
  return [...placeholders, caption ?? ''].filter((part) => part !== '').join(' ');
}
