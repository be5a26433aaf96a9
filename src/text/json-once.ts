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
