import { type ChildProcess, fork } from 'node:child_process';
import os from 'node:os';
import type { IngestLoad } from './jobs/queue.js';
import type { Logger } from './logger.js';
import type { MetricFamilies } from './metrics.js';
import { BUSY_HELD, CHECK_MS, SATURATED, SATURATION_WINDOW_MS } from './webhooks-in/ingest-priority.js';

/**
 * Set (to "1") in the environment of the worker process that role `all` starts: that process
 * serves no port of its own and answers its parent over IPC. Not a setting: `inbox serve`
 * sets it for its own child.
 */
export const SUPERVISED_WORKER_ENV = 'INBOX_SUPERVISED_WORKER';

/** A restart waits this long after the first crash, twice as long after each next one, up to `maxMs`. */
export const RESTART_BACKOFF = { firstMs: 1000, maxMs: 30_000 } as const;
/** A worker process that stayed ready this long has its next crash count as a first one again. */
export const STABLE_MS = 60_000;
/** How long a scrape waits for the worker process's metrics before answering without them. */
export const METRICS_TIMEOUT_MS = 2000;
/**
 * The worker process's niceness: where both want the CPU, the api that acknowledges gets most
 * of it and the worker catches up after; on an idle machine the worker runs at full speed.
 */
export const WORKER_NICENESS = 10;
/** How long a stop waits for the worker process to finish its jobs before killing it. */
export const STOP_TIMEOUT_MS = 30_000;

type ToWorker = { type: 'metrics'; id: number } | { type: 'ingest'; held: number };
type FromWorker = { type: 'ready' } | { type: 'metrics'; id: number; metrics: MetricFamilies };

export interface WorkerProcessOptions {
  /** The script the parent runs (`process.argv[1]`: the CLI, compiled or through tsx). */
  entry: string;
  /** The environment of the worker process: the parent's, with its database resolved. */
  env: NodeJS.ProcessEnv;
  log: Logger;
  /**
   * The parent's ingestion: the worker process holds its batches back while acknowledgements
   * queue up (yieldToIngest), as a worker beside the api in one process did. The two processes
   * still share the machine's cores and Postgres, which a burst needs for acknowledging.
   */
  ingest?: IngestLoad;
}

/**
 * The worker role of `npm start` (role `all`) in a process of its own, so that processing never
 * runs on the event loop that acknowledges webhooks: the two share nothing but Postgres. The
 * parent starts it, restarts it with back-off when it dies (the parent is not ready meanwhile),
 * reads its metrics over IPC at scrape time, and stops it — letting it finish the jobs in
 * hand — before it stops itself. A worker process whose parent dies sees its IPC channel close
 * and stops too (src/cli.ts).
 */
export class WorkerProcess {
  private child: ChildProcess | undefined;
  private ready = false;
  private readySince = 0;
  private stopping = false;
  private crashes = 0;
  private restartTimer: NodeJS.Timeout | undefined;
  private nextRequest = 0;
  private readonly waiting = new Map<number, (metrics: MetricFamilies | undefined) => void>();
  private first: { resolve: () => void; reject: (err: Error) => void } | undefined;
  private relay: NodeJS.Timeout | undefined;
  private busy = false;

  constructor(private readonly options: WorkerProcessOptions) {}

  /** The worker process's pid while one runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** True while a worker process runs and has said it works its queues. */
  get up(): boolean {
    return this.ready;
  }

  /** Starts the worker process; resolves when it works its queues, rejects if it exits first. */
  start(): Promise<void> {
    const ingest = this.options.ingest;
    if (ingest) {
      // Sent only when ingestion turns busy or calm again: a few messages per burst, not one per request.
      // Busy once BUSY_HELD deliveries wait, and for as long as the event loop that answers
      // stays saturated: under a burst the api's CPU is the limit, not its commits, and each
      // commit takes what arrived meanwhile, so the deliveries waiting dip under BUSY_HELD
      // between commits many times a second. Read as calm, those dips let the worker's batches
      // through mid-burst (a fifth of a burst's deliveries, measured), on the cores answering.
      // A steady load the loop keeps up with turns calm at once, and processing keeps pace.
      let window = performance.eventLoopUtilization();
      let windowStarted = performance.now();
      let saturated = false;
      this.relay = setInterval(() => {
        const now = performance.now();
        if (now - windowStarted >= SATURATION_WINDOW_MS) {
          saturated = performance.eventLoopUtilization(window).utilization >= SATURATED;
          window = performance.eventLoopUtilization();
          windowStarted = now;
        }
        const busy = ingest.held >= BUSY_HELD || (this.busy && saturated);
        if (busy !== this.busy) {
          this.busy = busy;
          this.tell({ type: 'ingest', held: ingest.held });
        }
      }, CHECK_MS);
      this.relay.unref();
    }
    return new Promise((resolve, reject) => {
      this.first = { resolve, reject };
      this.spawn();
    });
  }

  private tell(message: ToWorker): void {
    if (this.child?.connected) this.child.send(message, () => {});
  }

  /** The worker process's metrics (metricsForParent), or undefined when it is down or slow. */
  metrics(): Promise<MetricFamilies | undefined> {
    const child = this.child;
    if (!this.ready || !child?.connected) return Promise.resolve(undefined);
    const id = this.nextRequest++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => settle(undefined), METRICS_TIMEOUT_MS);
      const settle = (metrics: MetricFamilies | undefined) => {
        clearTimeout(timer);
        this.waiting.delete(id);
        resolve(metrics);
      };
      this.waiting.set(id, settle);
      child.send({ type: 'metrics', id } satisfies ToWorker, (err: Error | null) => {
        if (err) settle(undefined);
      });
    });
  }

  /** Stops the worker process, once it has finished the jobs it holds, and restarts no more. */
  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.restartTimer);
    clearInterval(this.relay);
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGTERM');
    const timer = setTimeout(() => {
      this.options.log.error({ workerPid: child.pid, waitedMs: STOP_TIMEOUT_MS }, 'worker process did not stop in time; killing it');
      child.kill('SIGKILL');
    }, STOP_TIMEOUT_MS);
    await exited;
    clearTimeout(timer);
  }

  private spawn(): void {
    const child = fork(this.options.entry, ['serve', '--role', 'worker'], {
      env: { ...this.options.env, [SUPERVISED_WORKER_ENV]: '1' },
      // Its log lines go to the parent's stdout and stderr, each saying `"role":"worker"`.
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      // Metric values may be NaN or Infinity, which JSON would not carry.
      serialization: 'advanced',
      // A process group of its own: Ctrl-C in a terminal signals the whole foreground group,
      // and the worker would stop (and look like a crash to restart) before this process has
      // stopped taking requests. The parent stops it in its turn (stop()); the IPC channel
      // still ends it when the parent dies, however it dies.
      detached: true,
    });
    this.child = child;
    try {
      if (child.pid !== undefined) os.setPriority(child.pid, WORKER_NICENESS);
    } catch (err) {
      this.options.log.warn({ err, workerPid: child.pid }, 'could not lower the worker process’s CPU priority');
    }
    child.on('message', (message: FromWorker) => {
      if (message.type === 'ready') {
        // A restarted worker process learns where ingestion stands.
        if (this.busy) this.tell({ type: 'ingest', held: this.options.ingest?.held ?? 0 });
        this.ready = true;
        this.readySince = Date.now();
        this.options.log.info({ workerPid: child.pid }, 'worker process is working the queues');
        this.first?.resolve();
        this.first = undefined;
      } else if (message.type === 'metrics') {
        this.waiting.get(message.id)?.(message.metrics);
      }
    });
    child.once('exit', (code, signal) => this.exited(child, code, signal));
  }

  private exited(child: ChildProcess, code: number | null, signal: NodeJS.Signals | null): void {
    const wasReady = this.ready;
    this.ready = false;
    if (this.child === child) this.child = undefined;
    for (const settle of [...this.waiting.values()]) settle(undefined);
    if (this.first) {
      this.first.reject(new Error(`the worker process exited before it was ready (code ${code}, signal ${signal})`));
      this.first = undefined;
      return;
    }
    if (this.stopping) return;
    if (wasReady && Date.now() - this.readySince >= STABLE_MS) this.crashes = 0;
    const delayMs = Math.min(RESTART_BACKOFF.maxMs, RESTART_BACKOFF.firstMs * 2 ** this.crashes);
    this.crashes++;
    this.options.log.error({ workerPid: child.pid, code, signal, restartInMs: delayMs }, 'worker process exited; restarting it');
    this.restartTimer = setTimeout(() => {
      if (!this.stopping) this.spawn();
    }, delayMs);
  }
}

/** True in the worker process that role `all` started (it has an IPC channel to its parent). */
export function isSupervisedWorker(env: NodeJS.ProcessEnv = process.env): boolean {
  return env[SUPERVISED_WORKER_ENV] === '1' && process.send !== undefined;
}

/**
 * The worker process's side: answers its parent's requests for metrics, reads how busy its
 * parent's ingestion is (`ingest`, for its workers), and says when it works its queues. The CLI
 * stops the process when the channel closes (`disconnect`: the parent exited, even by SIGKILL),
 * so no worker outlives the `npm start` that started it.
 */
export function serveParent(metrics: () => Promise<MetricFamilies>): { ingest: IngestLoad; ready(): void } {
  const send = (message: FromWorker) => {
    if (process.connected) process.send?.(message);
  };
  const ingest = { held: 0 };
  process.on('message', (message: ToWorker) => {
    if (message?.type === 'ingest') ingest.held = message.held;
    if (message?.type !== 'metrics') return;
    metrics().then(
      (m) => send({ type: 'metrics', id: message.id, metrics: m }),
      () => send({ type: 'metrics', id: message.id, metrics: [] }),
    );
  });
  // Ingestion the parent cannot tell about any more does not hold processing back.
  process.once('disconnect', () => (ingest.held = 0));
  return { ingest, ready: () => send({ type: 'ready' }) };
}
