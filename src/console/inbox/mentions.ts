/**
 * Mentions in a private note (docs/console.md, "Mentions"): `@` followed by the start of a
 * name lists the workspace's people; the note is sent with the ids of everyone whose "@Name"
 * stays in its text, so deleting the name takes the mention back.
 */
/** Who can be mentioned: a workspace user (`Person`) as far as mentions read it; no import, so tests read this file alone. */
export interface Person {
  id: number;
  name: string;
  active: boolean;
}

export interface MentionQuery {
  /** Where the `@` is. */
  at: number;
  query: string;
}

const MAX_QUERY = 40;
export const MAX_CHOICES = 8;

/** The `@…` the caret is in, if any: after the start or a space, up to the caret, on one line. */
export function mentionAt(text: string, caret: number): MentionQuery | null {
  const before = text.slice(0, caret);
  const m = /(^|\s)@([^\n@]*)$/.exec(before);
  if (!m || m[2]!.length > MAX_QUERY) return null;
  return { at: caret - m[2]!.length - 1, query: m[2]! };
}

/** People whose name, or a word of it, starts with what was typed (case and accents aside). */
export function choicesFor<P extends Person>(users: readonly P[], query: string, me: number): P[] {
  const q = fold(query);
  return users
    .filter((u) => u.active && u.id !== me)
    .filter((u) => {
      const name = fold(u.name);
      return name.startsWith(q) || name.includes(` ${q}`);
    })
    .slice(0, MAX_CHOICES);
}

const fold = (s: string) => s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();

/** The text with the `@…` at `q` replaced by "@Name " (no second space before one that follows), and where the caret goes. */
export function insertMention(text: string, q: MentionQuery, caret: number, user: Person): { text: string; caret: number } {
  const inserted = text.slice(caret).startsWith(' ') ? `@${user.name}` : `@${user.name} `;
  return { text: text.slice(0, q.at) + inserted + text.slice(caret), caret: q.at + inserted.length };
}

const literal = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A pattern finding "@Name" of any of `users`, the longest names first ("@Cy Young" before "@Cy"). */
function pattern(users: readonly Person[]): RegExp | null {
  if (users.length === 0) return null;
  const names = [...users].sort((a, b) => b.name.length - a.name.length).map((u) => literal(u.name));
  return new RegExp(`@(${names.join('|')})(?![\\p{L}\\p{N}])`, 'gu');
}

/** The ids of the people whose "@Name" is in `text`. */
export function mentionedIn(text: string, users: readonly Person[]): number[] {
  const re = pattern(users.filter((u) => u.active));
  if (!re) return [];
  const ids = new Set<number>();
  for (const m of text.matchAll(re)) {
    const user = users.find((u) => u.name === m[1]);
    if (user) ids.add(user.id);
  }
  return [...ids];
}

/** `text` cut into plain parts and "@Name" parts of `users`, for showing a note. */
export function splitMentions(text: string, users: readonly Person[]): { text: string; mention: boolean }[] {
  const re = pattern(users);
  if (!re) return [{ text, mention: false }];
  const parts: { text: string; mention: boolean }[] = [];
  let last = 0;
  for (const m of text.matchAll(re)) {
    if (m.index > last) parts.push({ text: text.slice(last, m.index), mention: false });
    parts.push({ text: m[0], mention: true });
    last = m.index + m[0].length;
  }
  if (last < text.length) parts.push({ text: text.slice(last), mention: false });
  return parts;
}
