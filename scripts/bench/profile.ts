// Where a service process's JavaScript time went, from the `.cpuprofile` files that
// BENCH_NODE_FLAGS="--cpu-prof --cpu-prof-dir=DIR" leaves (one per process the bench starts):
//
//   node --import tsx scripts/bench/profile.ts DIR            which file is which process and build
//   node --import tsx scripts/bench/profile.ts A.cpuprofile [B.cpuprofile] [--per A_COUNT[,B_COUNT]] [--top 20]
//       [--after processDeliveries]
//
// For one file, or two side by side (B is usually the ref's build of the same process): the self
// time of the top functions and of each module (a package of node_modules, a file of the
// service, node's internals, the garbage collector), and the inclusive time of the functions the
// delivery path is made of. `--per` divides every figure by that many deliveries (µs each);
// `--after <function>` leaves out what came before that function first ran (a worker's start).
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** Where a frame's code lives: a package, a file of the service (from its src/), node's own. */
function moduleOf(url: string, name: string): string {
  if (url === '') return name.startsWith('(') ? name : '(native)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1]!;
  const own = /\/(?:dist\/)?(src\/.*)$/.exec(url);
  if (own) return own[1]!;
  if (url.startsWith('node:')) return 'node:internal';
  return path.basename(url);
}

function frameKey(f: CallFrame): string {
  return `${f.functionName || '(anonymous)'} ${moduleOf(f.url, f.functionName)}:${f.lineNumber + 1}`;
}

export interface ProfileSummary {
  file: string;
  /** Which checkout the service code came from, and whether it ran the webhook worker. */
  root: string;
  role: 'worker' | 'api' | 'other';
  totalMs: number;
  idleMs: number;
  self: Map<string, number>;
  modules: Map<string, number>;
  inclusive: Map<string, number>;
}

/** `after`: count only the samples from the first one with that function on its stack (e.g. the drain's first batch). */
export function summarise(file: string, after?: string): ProfileSummary {
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const self = new Map<string, number>();
  const modules = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let totalMs = 0;
  let idleMs = 0;
  const add = (m: Map<string, number>, k: string, v: number) => m.set(k, (m.get(k) ?? 0) + v);
  const onStack = (id: number | undefined, name: string): boolean => {
    for (; id !== undefined; id = parent.get(id)) if (byId.get(id)!.callFrame.functionName === name) return true;
    return false;
  };
  let started = after === undefined;
  for (let i = 0; i < p.samples.length; i++) {
    const ms = (p.timeDeltas[i + 1] ?? 0) / 1000;
    const node = byId.get(p.samples[i]!)!;
    if (!started) {
      if (!onStack(node.id, after!)) continue;
      started = true;
    }
    if (node.callFrame.functionName === '(idle)') {
      idleMs += ms;
      continue;
    }
    totalMs += ms;
    add(self, frameKey(node.callFrame), ms);
    add(modules, moduleOf(node.callFrame.url, node.callFrame.functionName), ms);
    const seen = new Set<string>();
    for (let id: number | undefined = node.id; id !== undefined; id = parent.get(id)) {
      const name = byId.get(id)!.callFrame.functionName;
      if (name && !seen.has(name)) {
        seen.add(name);
        add(inclusive, name, ms);
      }
    }
  }
  const urls = p.nodes.map((n) => n.callFrame.url).filter((u) => u.includes('/dist/src/'));
  const root = urls[0] ? urls[0].slice(0, urls[0].indexOf('/dist/src/')).replace(/^file:\/\//, '') : '?';
  const role = inclusive.has('processDeliveries')
    ? 'worker'
    : inclusive.has('ingestDelivery') || urls.some((u) => u.includes('webhooks.routes'))
      ? 'api'
      : 'other';
  return { file, root, role, totalMs, idleMs, self, modules, inclusive };
}

/** Functions of the delivery path whose inclusive time is worth a line (synchronous parts only). */
const PATH = [
  'processDeliveries',
  'normaliseRow',
  'applyDeliveries',
  'applyEvents',
  'planBatch',
  'writePlan',
  'batchChanges',
  'announce',
  'announcements',
  'publishEvents',
  'notifyPayload',
  'writeOutbox',
  'workInboundThreads',
  'messageResource',
  'threadResource',
  'parseRow',
  'execute',
  'compileQuery',
  'prepareValue',
];

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join('  ')).join('\n');
}

function main(): void {
  const args = process.argv.slice(2);
  const opt = (name: string) => {
    const i = args.indexOf(name);
    if (i < 0) return undefined;
    const v = args[i + 1];
    args.splice(i, 2);
    return v;
  };
  const per = (opt('--per') ?? '').split(',').filter(Boolean).map(Number);
  const top = Number(opt('--top') ?? 20);
  const after = opt('--after');
  if (args.length === 1 && !args[0]!.endsWith('.cpuprofile')) {
    const dir = args[0]!;
    for (const f of readdirSync(dir)
      .filter((n) => n.endsWith('.cpuprofile'))
      .sort()) {
      const s = summarise(path.join(dir, f));
      console.log(`${f}  ${s.role.padEnd(6)} ${s.root}  busy ${Math.round(s.totalMs)} ms, idle ${Math.round(s.idleMs)} ms`);
    }
    return;
  }
  const sums = args.map((f) => summarise(f, after));
  const scale = sums.map((_, i) => ((per[i] ?? per[0]) ? 1000 / (per[i] ?? per[0])! : 1));
  const unit = per.length > 0 ? 'µs/delivery' : 'ms';
  const fmt = (v: number | undefined, i: number) => (v === undefined ? '-' : (v * scale[i]!).toFixed(1));
  const head = (what: string) => [what, ...sums.map((s) => `${path.basename(path.dirname(s.root))}/${path.basename(s.root)} (${unit})`)];
  const ranked = (pick: (s: ProfileSummary) => Map<string, number>, n: number) => {
    const keys = new Set<string>();
    for (const s of sums) for (const [k] of [...pick(s)].sort((a, b) => b[1] - a[1]).slice(0, n)) keys.add(k);
    return [...keys]
      .map((k) => [k, ...sums.map((s, i) => fmt(pick(s).get(k), i))])
      .sort((a, b) => Number(b[1] === '-' ? 0 : b[1]) - Number(a[1] === '-' ? 0 : a[1]));
  };
  console.log(table([head('busy (not idle)'), ['all', ...sums.map((s, i) => fmt(s.totalMs, i))]]));
  console.log(`\nself time, top ${top} functions of each\n`);
  console.log(table([head('function module:line'), ...ranked((s) => s.self, top)]));
  console.log('\nself time by module\n');
  console.log(table([head('module'), ...ranked((s) => s.modules, top)]));
  console.log('\ninclusive time (synchronous work under the function)\n');
  console.log(
    table([
      head('function'),
      ...PATH.filter((f) => sums.some((s) => s.inclusive.has(f))).map((f) => [f, ...sums.map((s, i) => fmt(s.inclusive.get(f), i))]),
    ]),
  );
}

main();
