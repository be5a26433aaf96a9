import { useState } from 'preact/hooks';
import { aiEnabled } from '../inbox/ai';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { attempt, useLoad } from '../shared/use-load';
import { Failure } from './Failure';

/**
 * The workspace's AI assist (docs/ai.md): an OpenAI-compatible server, its model and key. The
 * key is write-only: the service only says whether one is set, so the field stays empty and an
 * empty field keeps the key set.
 */
export function AiAssist() {
  const s = useStore(session)!;
  const workspace = useLoad(() => s.client.workspace());
  const [edits, setEdits] = useState<Record<string, string | boolean>>({});
  const [saved, setSaved] = useState<string | null>(null);
  const ai = workspace.data?.ai;
  const value = (field: string, fallback: string | boolean) => (field in edits ? edits[field]! : fallback);
  const set = (field: string, v: string | boolean) => setEdits({ ...edits, [field]: v });
  const enabled = value('enabled', ai?.enabled ?? false) as boolean;
  const baseUrl = value('baseUrl', ai?.baseUrl ?? '') as string;
  const model = value('model', ai?.model ?? '') as string;
  const apiKey = value('apiKey', '') as string;

  async function change(
    patch: { enabled?: boolean; baseUrl?: string | null; model?: string | null; apiKey?: string | null },
    done: string,
  ) {
    setSaved(null);
    let answer: boolean | undefined;
    const ok = await attempt(async () => {
      answer = (await s.client.updateWorkspace({ ai: patch })).ai.enabled;
    }, workspace.setError);
    if (!ok) return;
    // The composer's buttons follow at once, without a reload.
    aiEnabled.set(answer ?? null);
    setEdits({});
    setSaved(done);
    await workspace.reload();
  }

  function save(e: Event) {
    e.preventDefault();
    void change(
      {
        enabled,
        baseUrl: baseUrl.trim() || null,
        model: model.trim() || null,
        ...(apiKey ? { apiKey } : {}),
      },
      enabled ? 'AI assist is on.' : 'AI assist is saved, and off.',
    );
  }

  return (
    <>
      <Failure error={workspace.error} />
      {saved && (
        <p class="notice" role="status">
          {saved}
        </p>
      )}
      <p>
        Agents get “Suggest” (Ctrl+J) and “Rewrite” in the reply box and “Summarize” on a conversation, answered by a model you choose: any
        server that speaks OpenAI’s <code>/chat/completions</code> (Ollama, vLLM, llama.cpp, OpenAI, Azure OpenAI). Nothing the model writes
        is sent without an agent. A server on this machine or your own network also needs the operator to set{' '}
        <code>INBOX_ALLOW_PRIVATE_AI=true</code>.
      </p>
      <form class="settings-form" onSubmit={save} aria-labelledby="ai-title">
        <h3 id="ai-title">Model</h3>
        <label>
          Base URL
          <input
            type="url"
            required={enabled}
            maxLength={500}
            placeholder="http://127.0.0.1:11434/v1"
            value={baseUrl}
            onInput={(e) => set('baseUrl', e.currentTarget.value)}
          />
        </label>
        <label>
          Model
          <input
            required={enabled}
            maxLength={200}
            placeholder="llama3.1"
            value={model}
            onInput={(e) => set('model', e.currentTarget.value)}
          />
        </label>
        <label>
          API key (optional)
          <input
            type="password"
            autocomplete="off"
            maxLength={1000}
            placeholder={ai?.apiKeySet ? 'Set; leave empty to keep it' : 'None'}
            value={apiKey}
            onInput={(e) => set('apiKey', e.currentTarget.value)}
          />
        </label>
        <label class="check">
          <input type="checkbox" checked={enabled} onChange={(e) => set('enabled', e.currentTarget.checked)} /> AI assist is on
        </label>
        <button type="submit" class="primary">
          Save AI assist
        </button>
        {ai?.apiKeySet && (
          <button type="button" onClick={() => void change({ apiKey: null }, 'The API key is removed.')}>
            Remove the API key
          </button>
        )}
      </form>
    </>
  );
}
