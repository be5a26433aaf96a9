import { useEffect, useState } from 'preact/hooks';
import type { Message } from '../client/client';
import { session } from './session';
import { useStore } from './store';

/**
 * A message's files, when it has `attachments` (docs/attachments.md): images inline, other
 * files as downloads. A link the service signed is used as it is; any other needs the
 * agent's token, so the bytes are fetched and shown from a blob: URL (the CSP allows those).
 */
interface Attachment {
  id: number | string;
  kind?: string;
  contentType?: string | null;
  filename?: string | null;
  size?: number | null;
  status?: string;
  url?: string | null;
}

const isSigned = (url: string) => /[?&]signature=/.test(url);

function useFileUrl(url: string | null | undefined): string | null {
  const s = useStore(session);
  const [blobUrl, setBlobUrl] = useState<string | null>(null);
  useEffect(() => {
    if (!url || isSigned(url) || !s) return;
    let made: string | null = null;
    let live = true;
    fetch(url, { headers: { authorization: `Bearer ${s.token}` } })
      .then((r) => (r.ok ? r.blob() : Promise.reject(new Error(String(r.status)))))
      .then((b) => {
        if (!live) return;
        made = URL.createObjectURL(b);
        setBlobUrl(made);
      })
      .catch(() => undefined);
    return () => {
      live = false;
      if (made) URL.revokeObjectURL(made);
    };
  }, [url, s?.token]);
  if (!url) return null;
  return isSigned(url) ? url : blobUrl;
}

function File({ a }: { a: Attachment }) {
  const url = useFileUrl(a.status === 'failed' ? null : a.url);
  const name = a.filename || `${a.kind ?? 'file'} ${a.id}`;
  if (a.status === 'pending') return <p class="file">{name}: downloading from the provider…</p>;
  if (a.status === 'failed') return <p class="file failed">{name}: could not be fetched</p>;
  const image = a.kind === 'image' || a.contentType?.startsWith('image/');
  if (image && url) return <img class="inline-image" src={url} alt={a.filename || 'image'} loading="lazy" />;
  return url ? (
    <a class="file" href={url} download={name}>
      ⬇ {name}
    </a>
  ) : (
    <p class="file">{name}</p>
  );
}

export function Attachments({ message }: { message: Message }) {
  const list = (message as Message & { attachments?: Attachment[] }).attachments;
  if (!list?.length) return null;
  return (
    <div class="attachments">
      {list.map((a) => (
        <File key={a.id} a={a} />
      ))}
    </div>
  );
}
