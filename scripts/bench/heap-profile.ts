// What a service process allocated, from the PID.heapprofile that heap-sample.mjs writes:
//
//   node --import tsx scripts/bench/heap-profile.ts FILE [--per N] [--top 40]
//
// The bytes allocated by each function itself (its own objects; a builtin's, such as JSON.parse's,
// count for the function that called it) and under it, in KB, divided by --per (deliveries).
// The process's start is in the total: compare runs of the same size.
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface HeapNode {
  callFrame: { functionName: string; url: string; lineNumber: number };
  selfSize: number;
  children: HeapNode[];
}

const { positionals, values } = parseArgs({
  allowPositionals: true,
  options: { per: { type: 'string', default: '1' }, top: { type: 'string', default: '40' } },
});
if (positionals.length !== 1) {
  console.error('usage: heap-profile.ts FILE [--per N] [--top 40]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(positionals[0]!, 'utf8')) as { head: HeapNode };
const per = Number(values.per);
const top = Number(values.top);

function frameKey(n: HeapNode): string {
  const url = n.callFrame.url.replace(/.*node_modules\//, '').replace(/.*\/(dist\/)?(?=src\/)/, '');
  return `${n.callFrame.functionName || '(anonymous)'} ${url}:${n.callFrame.lineNumber + 1}`;
}

const self = new Map<string, number>();
const inclusive = new Map<string, number>();
function walk(n: HeapNode, onStack: Set<string>): number {
  const key = frameKey(n);
  self.set(key, (self.get(key) ?? 0) + n.selfSize);
  const first = !onStack.has(key);
  if (first) onStack.add(key);
  let total = n.selfSize;
  for (const c of n.children) total += walk(c, onStack);
  // A recursive frame counts once, at its outermost call.
  if (first) {
    onStack.delete(key);
    inclusive.set(key, (inclusive.get(key) ?? 0) + total);
  }
  return total;
}
const total = walk(profile.head, new Set());

const kb = (bytes: number) => (bytes / per / 1024).toFixed(2).padStart(8);
console.log(`allocated ${kb(total).trim()} KB${per === 1 ? '' : ' per delivery'}`);
for (const [title, m] of [
  ['self', self],
  ['inclusive', inclusive],
] as const) {
  console.log(`\n${title} (KB)`);
  for (const [k, v] of [...m].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${kb(v)}  ${k}`);
}
