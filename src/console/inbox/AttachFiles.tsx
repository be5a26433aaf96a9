import { useRef } from 'preact/hooks';
import { fileSize } from '../shared/format';
import { attachFiles, type ChosenFile, removeFile } from './files';

/**
 * The composer's "Attach files" button (a real button, so the keyboard reaches it; the file
 * input behind it is out of the tab order) and the chosen files as removable chips.
 */
export function AttachButton({
  threadId,
  room,
  limit,
  onChange,
}: {
  threadId: number;
  /** How many more files this message may take. */
  room: number;
  limit: number;
  /** Called when the set of files changes (a new message: a new idempotency key). */
  onChange: () => void;
}) {
  const input = useRef<HTMLInputElement>(null);
  if (limit === 0) return null;
  const label = limit === 1 ? 'Attach a file' : 'Attach files';
  return (
    <>
      <input
        ref={input}
        type="file"
        class="sr-only"
        tabIndex={-1}
        aria-hidden="true"
        multiple={limit > 1}
        data-testid="file-input"
        onChange={(e) => {
          const picked = [...(e.currentTarget.files ?? [])].slice(0, room);
          e.currentTarget.value = '';
          if (picked.length === 0) return;
          attachFiles(threadId, picked);
          onChange();
        }}
      />
      <button
        type="button"
        class="attach"
        onClick={() => input.current?.click()}
        disabled={room <= 0}
        title={room <= 0 ? (limit === 1 ? 'This channel takes one file per message' : `At most ${limit} files`) : undefined}
      >
        <svg width="14" height="14" viewBox="0 0 24 24" aria-hidden="true" fill="none" stroke="currentColor" stroke-width="2">
          <path d="M21 11.5l-8.6 8.6a5.5 5.5 0 01-7.8-7.8l8.6-8.6a3.7 3.7 0 015.2 5.2l-8.6 8.6a1.8 1.8 0 01-2.6-2.6l7.9-7.9" />
        </svg>
        {label}
      </button>
    </>
  );
}

export function FileChips({ threadId, files, onChange }: { threadId: number; files: readonly ChosenFile[]; onChange: () => void }) {
  if (files.length === 0) return null;
  return (
    <ul class="file-chips" aria-label="Files to send">
      {files.map((f) => (
        <li key={f.key} class={`file-chip file-chip-${f.state}`}>
          <span class="file-chip-name">{f.name}</span> <span class="file-chip-size">{fileSize(f.size)}</span>
          {f.state === 'uploading' && (
            <>
              {' '}
              <progress aria-label={`Uploading ${f.name}`} /> <span>Uploading…</span>
            </>
          )}
          {f.state === 'failed' && (
            <span class="file-chip-error" role="alert">
              {' '}
              Not uploaded: {f.error}
            </span>
          )}
          <button
            type="button"
            class="link"
            aria-label={`Remove ${f.name}`}
            onClick={() => {
              removeFile(threadId, f.key);
              onChange();
            }}
          >
            ✕
          </button>
        </li>
      ))}
    </ul>
  );
}
