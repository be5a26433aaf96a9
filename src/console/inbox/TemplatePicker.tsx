import { useState } from 'preact/hooks';
import type { Thread } from '../../../packages/client/src/index';
import { errorText } from '../shared/api';
import { session } from '../shared/session';
import { useStore } from '../shared/store';
import { useTemplates } from './use-composer';

/** The connection's approved templates, with an input per body parameter; sent as a template reply. */
export function TemplatePicker({ thread, onSent }: { thread: Thread; onSent: () => void }) {
  const s = useStore(session)!;
  const { templates, error, setError } = useTemplates(thread.connectionId);
  const [chosen, setChosen] = useState('');
  const [params, setParams] = useState<string[]>([]);
  const [busy, setBusy] = useState(false);
  const [key, setKey] = useState(() => crypto.randomUUID());

  const template = templates?.find((t) => `${t.name}|${t.language}` === chosen);

  async function send(event: Event) {
    event.preventDefault();
    if (!template) return;
    setBusy(true);
    setError(null);
    try {
      await s.client.reply(
        thread.id,
        { template: { name: template.name, language: template.language, parameters: { body: params.slice(0, template.parameterCount) } } },
        { idempotencyKey: key },
      );
      setKey(crypto.randomUUID());
      setChosen('');
      setParams([]);
      onSent();
    } catch (err) {
      setError(errorText(err));
    } finally {
      setBusy(false);
    }
  }

  if (templates === null) return <p>Loading templates…</p>;
  if (templates.length === 0 && !error) return <p>This connection has no approved templates.</p>;
  return (
    <form class="templates" onSubmit={send}>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      <label>
        Template
        <select
          value={chosen}
          onChange={(e) => {
            setChosen(e.currentTarget.value);
            setParams([]);
          }}
        >
          <option value="">Choose a template…</option>
          {templates.map((t) => (
            <option key={`${t.name}|${t.language}`} value={`${t.name}|${t.language}`}>
              {t.name} ({t.language})
            </option>
          ))}
        </select>
      </label>
      {template &&
        Array.from({ length: template.parameterCount }, (_, i) => (
          <label key={i}>
            {`Parameter {{${i + 1}}}`}
            <input
              required
              value={params[i] ?? ''}
              onInput={(e) => setParams((p) => Object.assign([...p], { [i]: e.currentTarget.value }))}
            />
          </label>
        ))}
      <button type="submit" class="primary" disabled={!template || busy}>
        Send template
      </button>
    </form>
  );
}
