import { describe, expect, it } from 'vitest';
import type { TeamUser } from '../../packages/client/src/index.js';
import { choicesFor, insertMention, mentionAt, mentionedIn, splitMentions } from '../../src/console/inbox/mentions.js';

// The `@` picker's rules (docs/console.md, "Mentions"), on text alone.
const user = (id: number, name: string, active = true): TeamUser => ({
  id,
  name,
  email: `u${id}@acme.test`,
  roles: ['agent'],
  active,
  availability: 'online',
  maxOpenThreads: null,
  connected: false,
  invited: false,
  inviteExpiresAt: null,
  createdAt: '2026-01-01T00:00:00.000Z',
});
const cy = user(1, 'Cy');
const cyYoung = user(2, 'Cy Young');
const ada = user(3, 'Ada Lovelace');
const zoe = user(4, 'Zoë Ortiz');
const gone = user(5, 'Cyril Gone', false);
const team = [cy, cyYoung, ada, zoe, gone];

describe('mentions in a note', () => {
  it('opens at an @ after the start or a space, never inside a word or an e-mail', () => {
    expect(mentionAt('@ad', 3)).toEqual({ at: 0, query: 'ad' });
    expect(mentionAt('thanks @Ada Lo', 14)).toEqual({ at: 7, query: 'Ada Lo' });
    expect(mentionAt('mail bo@acme.test', 17)).toBeNull();
    expect(mentionAt('@ada\nnext line', 14)).toBeNull();
  });

  it('offers active colleagues by the start of their name or of a word of it, accents aside, never oneself', () => {
    expect(choicesFor(team, 'cy', 1).map((u) => u.id)).toEqual([2]);
    expect(choicesFor(team, 'lov', 1).map((u) => u.id)).toEqual([3]);
    expect(choicesFor(team, 'zoe', 1).map((u) => u.id)).toEqual([4]);
    expect(choicesFor(team, '', 3).map((u) => u.id)).toEqual([1, 2, 4]);
  });

  it('inserts "@Name " in place of what was typed, the caret after it', () => {
    const q = mentionAt('ask @ad about it', 7)!;
    expect(insertMention('ask @ad about it', q, 7, ada)).toEqual({ text: 'ask @Ada Lovelace about it', caret: 17 });
    expect(insertMention('@ad', mentionAt('@ad', 3)!, 3, ada)).toEqual({ text: '@Ada Lovelace ', caret: 14 });
  });

  it('mentions whoever is named in the sent text, the longest name first, and nobody whose name was deleted', () => {
    expect(mentionedIn('@Cy Young and @Ada Lovelace, see this', team)).toEqual([2, 3]);
    expect(mentionedIn('@Cy, see this', team)).toEqual([1]);
    expect(mentionedIn('@Cyrus is not a user', team)).toEqual([]);
    expect(mentionedIn('nobody named', team)).toEqual([]);
    expect(mentionedIn('@Cyril Gone left', team)).toEqual([]);
  });

  it('sets apart the names a note mentions when it is shown', () => {
    expect(splitMentions('@Ada Lovelace can you check? cc @Cy', [ada, cy])).toEqual([
      { text: '@Ada Lovelace', mention: true },
      { text: ' can you check? cc ', mention: false },
      { text: '@Cy', mention: true },
    ]);
    expect(splitMentions('no names', [])).toEqual([{ text: 'no names', mention: false }]);
  });
});
