/**
 * The JSON array of items whose JSON is already written (`json` of each): the text of the one
 * `json` parameter a batch statement unpacks with json_array_elements. Made by one join, the
 * brackets on the first and last item, so the text is flat: a `[${…}]` around a joined text
 * is a pair of pieces, which pg's Buffer.byteLength copied whole into a flat string again.
 */
export function jsonArray<T>(items: readonly T[], json: (item: T) => string): string {
  const n = items.length;
  if (n === 0) return '[]';
  const parts = new Array<string>(n);
  for (let i = 0; i < n; i++) parts[i] = json(items[i]!);
  parts[0] = `[${parts[0]}`;
  parts[n - 1] = `${parts[n - 1]}]`;
  return parts.join(',');
}
