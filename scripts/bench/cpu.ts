// CPU time of the processes a phase measures, read from /proc: a service process's own, and
// PostgreSQL's as a whole (the postmaster, its live backends and helpers, and the backends that
// exited meanwhile, which the kernel adds to the postmaster's children's time when it reaps them).
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { childrenOf } from '../../harness/service.js';

/** Milliseconds per clock tick of /proc/<pid>/stat (USER_HZ, 100 on Linux). */
const TICK_MS = 1000 / Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());

/** The fields of /proc/<pid>/stat after the command name; [1] is the parent, [11..14] utime, stime, cutime, cstime. */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // exited
  }
}

/** CPU milliseconds (user + system) a live process has used so far; 0 once it has exited. */
export function processCpuMs(pid: number | undefined): number {
  const f = pid === undefined ? undefined : statFields(pid);
  return f ? (Number(f[11]) + Number(f[12])) * TICK_MS : 0;
}

/**
 * CPU milliseconds a service has used so far with its child processes: `--role all` runs its
 * worker in a child (the children alive now, and those reaped, which the kernel adds to the
 * parent's children's time).
 */
export function serviceCpuMs(pid: number | undefined): number {
  const f = pid === undefined ? undefined : statFields(pid);
  if (!f) return 0;
  let ticks = Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14]);
  for (const child of childrenOf(pid)) ticks += processCpuMs(child) / TICK_MS;
  return ticks * TICK_MS;
}

/** CPU milliseconds PostgreSQL has used so far: the postmaster, every child alive now, and every child reaped. */
export function postgresCpuMs(postmasterPid: number): number {
  const pm = statFields(postmasterPid);
  if (!pm) return 0;
  let ticks = Number(pm[11]) + Number(pm[12]) + Number(pm[13]) + Number(pm[14]);
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(Number(entry));
    if (f && Number(f[1]) === postmasterPid) ticks += Number(f[11]) + Number(f[12]);
  }
  return ticks * TICK_MS;
}

/** What a PostgreSQL child is, from its process title ("postgres: walwriter", "postgres: user db 127.0.0.1(…) idle"). */
function kindOf(pid: number): string {
  let title: string;
  try {
    title = readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ');
  } catch {
    return 'exited';
  }
  const m =
    /^postgres: (autovacuum (?:launcher|worker)|walwriter|checkpointer|background writer|logical replication launcher|io worker|walsummarizer)/.exec(
      title,
    );
  return m ? m[1]!.replace('autovacuum launcher', 'autovacuum').replace('autovacuum worker', 'autovacuum') : 'backends';
}

/**
 * postgresCpuMs split by kind of process: the client backends, autovacuum, the WAL writer, the
 * checkpointer, the background writer, and `exited` (the postmaster and the children it reaped).
 */
export function postgresCpuByKind(postmasterPid: number): Record<string, number> {
  const pm = statFields(postmasterPid);
  if (!pm) return {};
  const out: Record<string, number> = { exited: (Number(pm[11]) + Number(pm[12]) + Number(pm[13]) + Number(pm[14])) * TICK_MS };
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const f = statFields(Number(entry));
    if (!f || Number(f[1]) !== postmasterPid) continue;
    const kind = kindOf(Number(entry));
    out[kind] = (out[kind] ?? 0) + (Number(f[11]) + Number(f[12])) * TICK_MS;
  }
  return out;
}

/** `after - before` of each kind, in ms. */
export function cpuByKindSince(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of new Set([...Object.keys(before), ...Object.keys(after)])) out[k] = Math.round((after[k] ?? 0) - (before[k] ?? 0));
  return out;
}
