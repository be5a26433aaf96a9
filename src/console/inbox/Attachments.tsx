import { useEffect, useState } from 'preact/hooks';
import type { Attachment, Message } from '../../../packages/client/src/index';
import { blobType, isRasterImage } from '../shared/file-types';
import { fileSize } from '../shared/format';
import { session } from '../shared/session';
import { useStore } from '../shared/store';

/**
 * A message's files (docs/attachments.md): images inline, other files as download links with
 * name and size, a placeholder while the service is still fetching one from the provider
 * (`pending`, replaced live on `message.updated`) and the reason when it could not. The
 * content route needs the agent's credential, which an <img src> cannot send: the bytes are
 * fetched with the token and shown from a blob: URL (the CSP allows those). A signed link
 * (live chat) is used as it is.
 *
 * A blob: URL is a document of the console's own origin, without the content route's
 * sandbox: opened in a tab, an SVG or HTML blob of its own type would run its script beside
 * the agent's session. So only raster images, audio and video keep their type; any other
 * file's blob is re-typed `application/octet-stream`, which a browser only ever downloads.
 */
const isSigned = (url: string) => /[?&]signature=/.test(url);

function useFileUrl(a: Attachment): string | null {
  const s = useStore(session);
  const [blobUrl, setBlobUrl] = useState<string | null>(null);
  const wanted = a.status === 'stored';
  // The service's own route on this origin: the `url` may name INBOX_PUBLIC_URL's host.
  const url = wanted && s ? (isSigned(a.url) ? a.url : s.client.attachments.contentUrl(a.id)) : null;
  const type = blobType(a.contentType);
  useEffect(() => {
    const token = session.get()?.token;
    if (!url || isSigned(url) || !token) return;
    let made: string | null = null;
    let live = true;
    fetch(url, { headers: { authorization: `Bearer ${token}` } })
      .then((r) => (r.ok ? r.blob() : Promise.reject(new Error(String(r.status)))))
      .then((b) => {
        if (!live) return;
        // Typed here, whatever the answer's content-type said.
        made = URL.createObjectURL(b.slice(0, b.size, type));
        setBlobUrl(made);
      })
      .catch(() => undefined);
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
    // Not again on a token refresh: the bytes are the same.
  }, [url, type]);
  if (!url) return null;
  return isSigned(url) ? url : blobUrl;
}

function File({ a }: { a: Attachment }) {
  const url = useFileUrl(a);
  const name = a.filename || `${a.kind} ${a.id}`;
  const size = a.size === null ? '' : ` (${fileSize(a.size)})`;
  if (a.status === 'pending')
    return (
      <p class="file file-pending" data-attachment-status="pending">
        {name}: downloading from the provider…
      </p>
    );
  if (a.status === 'failed')
    return (
      <p class="file failed" data-attachment-status="failed">
        {name}: could not be fetched{a.error ? ` (${a.error})` : ''}
      </p>
    );
  // An SVG is an image too, but one that can carry a script: it is offered as a download.
  const image = (a.kind === 'image' || a.kind === 'sticker') && isRasterImage(a.contentType);
  if (image && url) return <img class="inline-image" src={url} alt={a.filename || 'image'} data-attachment-id={a.id} />;
  return url ? (
    <a class="file" href={url} download={name} data-attachment-id={a.id}>
      ⬇ {name}
      {size}
    </a>
  ) : (
    <p class="file">
      {name}
      {size}
    </p>
  );
}

export function Attachments({ message }: { message: Message }) {
  if (!message.attachments?.length) return null;
  return (
    <div class="attachments">
      {message.attachments.map((a) => (
        <File key={a.id} a={a} />
      ))}
    </div>
  );
}
