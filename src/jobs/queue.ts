import { fromKysely, type Queue, type WorkOptions } from 'pg-boss';
import { type Executor, PREPARED_MARK } from '../db/database.js';
import type { Deps } from '../deps.js';

/**
 * One queue: its name, its pg-boss options and, when a worker serves it, the handler.
 * Handlers get the whole fetched batch (pg-boss 12 hands arrays to `work()`). A leaf module:
 * features define their queues with it and jobs/registry.ts lists them, so no feature ever
 * imports the registry.
 */
export interface QueueDefinition<T extends object = object> {
  name: string;
  options: Omit<Queue, 'name'>;
  /** A cron expression: workers send one job per slot (pg-boss's scheduler). */
  schedule?: string;
  worker?: {
    options: WorkOptions;
    handle: (deps: Deps, jobs: { id: string; data: T }[], context?: WorkerContext) => Promise<void>;
  };
}

/**
 * What the worker reads of ingestion beside it: how many deliveries wait for their commit. Role
 * `all`'s worker process reads its parent's InboxWriter, relayed over IPC (src/worker-process.ts);
 * the tests' one-process app hands its own writer; a worker of its own (role `worker`) gets none.
 */
export interface IngestLoad {
  readonly held: number;
}

/**
 * What processing tells the search indexer of its process: a batch that writes messages is in
 * flight, then over (committed or not). Indexing waits for processing (src/threads/search-index.ts).
 */
export interface SearchIndexing {
  begin(): void;
  end(): void;
}

/** What the process entry hands its workers besides the deps, as values passed at start. */
export interface WorkerContext {
  /** Ingestion on the same machine (role `all`), which goes first; absent in a worker of its own. */
  ingest?: IngestLoad;
  /** The process's search indexer, started with the workers. */
  searchIndex?: SearchIndexing;
}

/**
 * A worker that holds a job refreshes its heartbeat every half of this many seconds; once the
 * database has not seen it for this long, the supervisor hands the job to another attempt
 * (pg-boss's retry). That is how the jobs of a worker that died (kill -9, a lost machine) come
 * back within seconds instead of after `expireInSeconds`, whether or not it restarts, and
 * without guessing from another process which workers are alive. A worker that is alive but
 * cannot reach the database for this long loses its jobs too; what a second attempt may do
 * twice is bounded by each handler's own guard (a row's status, a message still `queued`).
 */
export const HEARTBEAT_SECONDS = 10;

/**
 * What a queue's jobs get unless its definition says otherwise. Handlers record their own
 * outcomes and schedule their own retries, so pg-boss's retry covers only what a handler
 * cannot record: a worker that died holding a job (its heartbeat stops) or a database that
 * was away. It starts at 1 s, so a dead worker's jobs are taken up again at once, and backs
 * off to 5 min over 12 tries; a job may run 2 minutes, and finished jobs are kept a week.
 */
export const defaultQueueOptions = {
  retryLimit: 12,
  retryDelay: 1,
  retryBackoff: true,
  retryDelayMax: 300,
  expireInSeconds: 120,
  heartbeatSeconds: HEARTBEAT_SECONDS,
  deleteAfterSeconds: 7 * 24 * 3600,
} satisfies QueueDefinition['options'];

/**
 * pg-boss's job insert (`send`, `insert`): one text per queue, its jobs one JSON parameter.
 * Prepared, as planning it cost more than running it (a reply queues one job).
 */
const JOB_INSERT = /^\s*WITH ins AS \(/;

/** pg-boss's view of a Kysely transaction, so a job joins the caller's commit. */
export function jobsIn(trx: Executor) {
  const jobs = fromKysely(trx as Parameters<typeof fromKysely>[0]);
  return {
    executeSql: (text: string, values?: unknown[]) =>
      jobs.executeSql(values !== undefined && values.length > 0 && JOB_INSERT.test(text) ? `${PREPARED_MARK}${text}` : text, values),
  };
}
