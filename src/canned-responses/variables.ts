/**
 * Canned-response variables (docs/automation.md): `{{contact.name}}`, `{{contact.email}}`,
 * `{{contact.attributes.<key>}}`, `{{agent.name}}`, `{{workspace.name}}`. Filled in by the
 * console when a canned response is inserted and by the service in rule and macro replies;
 * the one implementation, pure and without imports, so the console bundles the same code.
 * A name that is none of these stays as typed; a known one without a value becomes empty.
 */

export interface VariableValues {
  contact: { name: string | null; email: string | null; attributes: Record<string, string | number | boolean> };
  agent: { name: string | null } | null;
  workspace: { name: string };
}

const ATTRIBUTES = 'contact.attributes.';

/** The value of one variable, or undefined for a name that is no variable. */
function variable(name: string, values: VariableValues): string | undefined {
  if (name.startsWith(ATTRIBUTES)) {
    const key = name.slice(ATTRIBUTES.length);
    if (key.length === 0) return undefined;
    const attributes = values.contact.attributes;
    return Object.hasOwn(attributes, key) ? String(attributes[key]) : '';
  }
  switch (name) {
    case 'contact.name':
      return values.contact.name ?? '';
    case 'contact.email':
      return values.contact.email ?? '';
    case 'agent.name':
      return values.agent?.name ?? '';
    case 'workspace.name':
      return values.workspace.name;
    default:
      return undefined;
  }
}

/**
 * A contact's e-mail as variables and rules read it: the one set on it, else the address it
 * mailed from (an e-mail handle, the smallest of them), as src/automation/automation-rules.queries.ts reads it.
 */
export function contactEmailOf(contact: { email: string | null; handles: { integrationKey: string; externalId: string }[] }) {
  if (contact.email) return contact.email;
  const mailed = contact.handles
    .filter((h) => h.integrationKey === 'email' || h.integrationKey.startsWith('email.'))
    .map((h) => h.externalId)
    .sort();
  return mailed[0] ?? null;
}

/** `text` with its variables filled in: one pass, left to right, so a value is never read as a variable. */
export function fillVariables(text: string, values: VariableValues): string {
  let out = '';
  let at = 0;
  for (;;) {
    const first = text.indexOf('{{', at);
    if (first < 0) break;
    const close = text.indexOf('}}', first + 2);
    if (close < 0) break;
    // The opening nearest the closing: a stray `{{` before a variable does not swallow it.
    const open = text.lastIndexOf('{{', close - 2);
    const name = text.slice(open + 2, close).trim();
    const value = name.length <= 120 ? variable(name, values) : undefined;
    out += text.slice(at, open) + (value ?? text.slice(open, close + 2));
    at = close + 2;
  }
  return out + text.slice(at);
}
