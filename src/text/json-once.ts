/** Serialises an object to JSON; see jsonOnce. */
export type Serialise = (value: object) => string;

/**
 * JSON.stringify that serialises each object once: one announcement tells sockets and
 * endpoints the same Thread (a `thread.updated` goes to both), and its text is the same in
 * both bodies. For objects that nobody changes while the returned function is in use.
 */
export function jsonOnce(): Serialise {
  const done = new Map<object, string>();
  return (value) => {
    let json = done.get(value);
    if (json === undefined) {
      json = JSON.stringify(value);
      done.set(value, json);
    }
    return json;
  };
}

const names = new Map<string, string>();
/** Names kept at most: the event types a process writes are a few dozen. */
const NAMES_MAX = 256;

/**
 * JSON.stringify of a name from a small fixed set (an event's type), written once per process:
 * every event of a batch wrote its type's JSON anew.
 */
export function nameJson(name: string): string {
  let json = names.get(name);
  if (json === undefined) {
    json = JSON.stringify(name);
    if (names.size < NAMES_MAX) names.set(name, json);
  }
  return json;
}

/** JSON.stringify of a number (an id), an integer printed as it is without the general writer. */
export function numberJson(n: number): string {
  return Number.isSafeInteger(n) ? String(n) : JSON.stringify(n);
}
