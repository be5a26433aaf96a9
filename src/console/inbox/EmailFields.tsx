import type { ReplyRequest } from '../../../packages/client/src/index';
import type { Draft } from './drafts';

const list = (typed: string | undefined) =>
  (typed ?? '')
    .split(/[,;\s]+/)
    .map((a) => a.trim())
    .filter((a) => a !== '');

/**
 * What the composer sends of an e-mail reply's Cc and Bcc (docs/email.md, "Replies"): an empty
 * Cc box sends none, so the service keeps the last mail's Cc; `-` in it sends the reply to no Cc.
 */
export function mailFields(draft: Draft): Pick<ReplyRequest, 'cc' | 'bcc'> {
  const cc = draft.cc?.trim() === '-' ? [] : list(draft.cc);
  const bcc = list(draft.bcc);
  return {
    ...(cc.length > 0 || draft.cc?.trim() === '-' ? { cc } : {}),
    ...(bcc.length > 0 ? { bcc } : {}),
  };
}

/** Cc and Bcc boxes above an e-mail thread's reply box. */
export function EmailFields({ draft, onChange }: { draft: Draft; onChange: (fields: Pick<Draft, 'cc' | 'bcc'>) => void }) {
  return (
    <div class="email-fields">
      <label>
        Cc
        <input
          type="text"
          name="cc"
          value={draft.cc ?? ''}
          placeholder="as the last mail (- for none)"
          onInput={(e) => onChange({ cc: e.currentTarget.value })}
        />
      </label>
      <label>
        Bcc
        <input type="text" name="bcc" value={draft.bcc ?? ''} onInput={(e) => onChange({ bcc: e.currentTarget.value })} />
      </label>
    </div>
  );
}
