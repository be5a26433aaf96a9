import { useState } from 'preact/hooks';
import type { CannedResponse } from '../../../packages/client/src/index';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, collect, useLoad } from '../shared/use-load';
import { Failure, FormError } from './Failure';
import { InlineForm } from './InlineForm';

/** Saved replies agents insert with `/` in the composer: create, edit, delete. */
export function CannedResponses() {
  const s = useStore(session)!;
  const { data, error, reload, setError } = useLoad(() => collect(s.client.cannedResponses({ limit: 100 })));
  const [shortCode, setShortCode] = useState('');
  const [content, setContent] = useState('');
  const [editing, setEditing] = useState<CannedResponse | null>(null);
  // A refusal shows beside the form that caused it (an edited one may sit far down the list).
  const [createError, setCreateError] = useState<string | null>(null);
  const [editError, setEditError] = useState<string | null>(null);

  async function create(e: Event) {
    e.preventDefault();
    if (await attempt(() => s.client.createCannedResponse({ shortCode, content }), setCreateError)) {
      setShortCode('');
      setContent('');
      await reload();
    }
  }

  async function save(e: Event) {
    e.preventDefault();
    if (!editing) return;
    const patch = { shortCode: editing.shortCode, content: editing.content };
    if (await attempt(() => s.client.updateCannedResponse(editing.id, patch), setEditError)) {
      setEditing(null);
      await reload();
    }
  }

  return (
    <>
      <Failure error={error} />
      <form class="settings-form" onSubmit={create} aria-labelledby="canned-new">
        <h3 id="canned-new">New canned response</h3>
        <label>
          Short code
          <input required value={shortCode} maxLength={40} pattern="[a-z0-9_\-]+" onInput={(e) => setShortCode(e.currentTarget.value)} />
        </label>
        <label>
          Content
          <textarea required value={content} maxLength={4096} rows={3} onInput={(e) => setContent(e.currentTarget.value)} />
        </label>
        <FormError error={createError} />
        <button type="submit" class="primary">
          Add canned response
        </button>
      </form>
      {data && data.length === 0 && <p class="empty">No canned responses yet.</p>}
      <ul class="settings-list" aria-label="Canned responses">
        {(data ?? []).map((c) =>
          editing?.id === c.id ? (
            <li key={c.id}>
              <EditCanned
                shortCode={c.shortCode}
                draft={editing}
                error={editError}
                onChange={setEditing}
                onSubmit={save}
                onCancel={() => {
                  setEditing(null);
                  setEditError(null);
                }}
              />
            </li>
          ) : (
            <li key={c.id}>
              <div>
                <strong>/{c.shortCode}</strong>
                <p class="muted">{c.content}</p>
              </div>
              <div class="row-actions">
                <button
                  type="button"
                  id={`canned-${c.id}-edit`}
                  onClick={() => {
                    setEditing(c);
                    setEditError(null);
                  }}
                  aria-label={`Edit /${c.shortCode}`}
                >
                  Edit
                </button>
                <button
                  type="button"
                  aria-label={`Delete /${c.shortCode}`}
                  onClick={() => void attempt(() => s.client.deleteCannedResponse(c.id), setError).then(reload)}
                >
                  Delete
                </button>
              </div>
            </li>
          ),
        )}
      </ul>
    </>
  );
}

/** A canned response's edit, in place of its row. */
function EditCanned(props: {
  /** The short code as saved: the form's name while the draft changes. */
  shortCode: string;
  draft: CannedResponse;
  error: string | null;
  onChange(draft: CannedResponse): void;
  onSubmit(e: Event): void;
  onCancel(): void;
}) {
  const { draft, onChange } = props;
  return (
    <InlineForm label={`Edit /${props.shortCode}`} onSubmit={props.onSubmit} onCancel={props.onCancel}>
      <label>
        Short code
        <input required value={draft.shortCode} onInput={(e) => onChange({ ...draft, shortCode: e.currentTarget.value })} />
      </label>
      <label>
        Content
        <textarea required value={draft.content} rows={3} onInput={(e) => onChange({ ...draft, content: e.currentTarget.value })} />
      </label>
      <FormError error={props.error} />
    </InlineForm>
  );
}
