import { useRef } from 'preact/hooks';
import { attachFiles, type ChosenFile, removeFile } from './files';
import { fileSize } from './format';

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
        📎 {label}
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
