import {
  AggregatorRegistry,
  Counter,
  type CounterConfiguration,
  collectDefaultMetrics,
  Gauge,
  Histogram,
  type LabelValues,
  Registry,
} from 'prom-client';
import { packageVersion } from './version.js';

/** A registry's metrics as values, as one process hands them to another. */
export type MetricFamilies = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/**
 * Gauges of shared state, read from Postgres at scrape time (and the build, the same in both):
 * the parent of `npm start` reports them, its worker process does not, so none is doubled.
 */
const PARENT_ONLY = new Set([
  'inbox_build_info',
  'inbox_ready',
  'inbox_queue_jobs',
  'inbox_queue_oldest_job_age_seconds',
  'inbox_webhook_dead_letters',
]);

/**
 * What the worker process of `npm start` (role `all`) adds to its parent's /metrics. Counters
 * and histograms of the service count events, each of which happened in one process: they are
 * summed with the parent's series of the same labels. What a process measures of itself —
 * Node's default metrics (`process_*`, `nodejs_*`) and the service's other gauges (pools,
 * sockets, the replica) — keeps its standard name and gains `role="<role>"`, so the parent's
 * own series (unlabelled) and the worker's stay apart instead of being added up.
 */
export async function metricsForParent(registry: Registry, role: string): Promise<MetricFamilies> {
  const out: MetricFamilies = [];
  for (const m of await registry.getMetricsAsJSON()) {
    if (PARENT_ONLY.has(m.name)) continue;
    const own = String(m.type) === 'gauge' || !m.name.startsWith('inbox_');
    // Only plain data crosses the process boundary (a metric object also holds its collect()).
    out.push({
      name: m.name,
      help: m.help,
      type: m.type,
      aggregator: m.aggregator,
      values: own ? m.values.map((v) => ({ ...v, labels: { ...v.labels, role } })) : m.values,
    } as MetricFamilies[number]);
  }
  return out;
}

/**
 * `own` and `more` as one exposition: series of the same name and labels are summed (every
 * metric is, whatever prom-client's cluster default for it, which would average or omit some of
 * Node's: the series it would merge are kept apart by metricsForParent instead).
 */
async function mergedText(own: MetricFamilies, more: MetricFamilies): Promise<string> {
  const summed = [own, more].map((families) => families.map((m) => ({ ...m, aggregator: 'sum' as const })));
  return AggregatorRegistry.aggregate(summed).metrics();
}

/** A connection pool as pg's Pool counts it (the query pool, and pg-boss's own). */
export interface PoolCounts {
  totalCount: number;
  idleCount: number;
  waitingCount: number;
  options: { max?: number };
}

/** One series of a tallied counter: what the caller adds to `n` is in the next read. */
interface Tally {
  n: number;
}

/**
 * A labelled counter for the request path: `tally(labels)` answers a series whose `n` the
 * caller increments, and every read of the registry (each calls collect first) adds what the
 * tallies hold to the counter. prom-client checks and hashes the labels on every `inc` (its
 * bound `labels()` children too), about 0.2-0.3 µs a call; an increment is nothing. Callers
 * keep one tally per label set, so the series are as bounded as with `inc`.
 */
function talliedCounter<L extends string>(config: CounterConfiguration<L>) {
  const tallies: { labels: LabelValues<L>; tally: Tally }[] = [];
  const counter = new Counter<L>({
    ...config,
    collect() {
      for (const { labels, tally } of tallies) {
        if (tally.n > 0) {
          this.inc(labels, tally.n);
          tally.n = 0;
        }
      }
    },
  });
  return Object.assign(counter, {
    tally(labels: LabelValues<L>): Tally {
      const tally = { n: 0 };
      tallies.push({ labels, tally });
      return tally;
    },
  });
}

/** A request's series of one route pattern and method: its duration's labels, its count per status. */
interface RequestSeries {
  duration: { method: string; route: string };
  byStatus: Map<number, Tally>;
}

/**
 * Every metric the service exports, on one registry per process (tests build many apps in
 * one process, so nothing uses prom-client's global registry). Gauges that reflect shared
 * state (queue depth, dead letters) are read from Postgres at scrape time by `collectors`,
 * so every api process reports the same truth.
 */
export function createMetrics() {
  const registry = new Registry();
  // Node's own metrics under their standard names (process_cpu_seconds_total,
  // nodejs_eventloop_lag_seconds, …), so stock dashboards and alerts find them.
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'inbox_build_info',
    help: 'Always 1; the version of the running build is its label',
    labelNames: ['version'] as const,
    registers: [registry],
  }).set({ version: packageVersion() }, 1);
  /** The pools this process holds, read when scraped (a few numbers in memory, no query). */
  const pools = new Map<string, () => PoolCounts | undefined>();
  const eachPool = (read: (name: string, counts: PoolCounts) => void) => {
    for (const [name, counts] of pools) {
      const c = counts();
      if (c) read(name, c);
    }
  };
  /** Another process's metrics, added to this one's exposition (the worker process of role `all`). */
  let more: (() => Promise<MetricFamilies | undefined>) | undefined;
  /** The read replica's state now (none configured: no reader). */
  let replicaState: (() => { up: boolean; lagSeconds: number | undefined }) | undefined;
  const httpRequests = talliedCounter({
    name: 'inbox_http_requests_total',
    help: 'HTTP requests by route pattern, method and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const httpDuration = new Histogram({
    name: 'inbox_http_request_duration_seconds',
    help: 'HTTP request duration by route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const webhookDeliveries = talliedCounter({
    name: 'inbox_webhook_deliveries_total',
    help: 'Inbound provider deliveries by integration key and outcome (accepted, rejected)',
    labelNames: ['integration', 'outcome'] as const,
    registers: [registry],
  });
  /** By route pattern, then method. */
  const requestSeries = new Map<string, Map<string, RequestSeries>>();
  const deliveryTallies = { accepted: new Map<string, Tally>(), rejected: new Map<string, Tally>() };
  return {
    registry,
    /** Adds what `read` answers (nothing when it answers undefined) to every exposition. */
    include(read: () => Promise<MetricFamilies | undefined>) {
      more = read;
    },
    /** The Prometheus text of /metrics: this process's registry and what `include` added. */
    async exposition(): Promise<string> {
      const extra = await more?.();
      return extra ? mergedText(await registry.getMetricsAsJSON(), extra) : registry.metrics();
    },
    /** Reports the read replica's lag in `inbox_replica_lag_seconds` and `inbox_replica_up`. */
    watchReplica(state: () => { up: boolean; lagSeconds: number | undefined }) {
      replicaState = state;
    },
    replicaLag: new Gauge({
      name: 'inbox_replica_lag_seconds',
      help: 'How far behind the primary the read replica may be now: the time since the last probe whose primary position it had replayed (absent without DATABASE_REPLICA_URL, while it is down, or before its first such probe)',
      registers: [registry],
      collect() {
        this.reset();
        const lag = replicaState?.().lagSeconds;
        if (lag !== undefined) this.set(lag);
      },
    }),
    replicaUp: new Gauge({
      name: 'inbox_replica_up',
      help: "1 when the read replica answered this process's last probe as a standby, else 0 (absent without DATABASE_REPLICA_URL)",
      registers: [registry],
      collect() {
        this.reset();
        if (replicaState) this.set(replicaState().up ? 1 : 0);
      },
    }),
    replicaSkipped: new Counter({
      name: 'inbox_replica_skipped_total',
      help: 'Reads meant for the read replica that went to the primary, by reason (down: unreachable or not a standby; lag: behind by more than INBOX_REPLICA_MAX_LAG_MS; own_write: it does not show yet a write the read must see)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    /** Reports a pool in the pool gauges under `name` (`db`: queries, `queue`: pg-boss). */
    watchPool(name: string, counts: () => PoolCounts | undefined) {
      pools.set(name, counts);
    },
    poolConnections: new Gauge({
      name: 'inbox_db_pool_connections',
      help: 'Connections a pool of this process holds to Postgres, by pool (db, queue) and state (total, idle)',
      labelNames: ['pool', 'state'] as const,
      registers: [registry],
      collect() {
        this.reset();
        eachPool((pool, c) => {
          this.set({ pool, state: 'total' }, c.totalCount);
          this.set({ pool, state: 'idle' }, c.idleCount);
        });
      },
    }),
    poolMax: new Gauge({
      name: 'inbox_db_pool_max_connections',
      help: 'The most connections a pool of this process opens (INBOX_DB_POOL_MAX, INBOX_QUEUE_POOL_MAX)',
      labelNames: ['pool'] as const,
      registers: [registry],
      collect() {
        this.reset();
        eachPool((pool, c) => this.set({ pool }, c.options.max ?? 10));
      },
    }),
    poolWaiting: new Gauge({
      name: 'inbox_db_pool_waiting_requests',
      help: 'Queries waiting for a connection of a pool of this process (the pool is exhausted while above 0)',
      labelNames: ['pool'] as const,
      registers: [registry],
      collect() {
        this.reset();
        eachPool((pool, c) => this.set({ pool }, c.waitingCount));
      },
    }),
    httpRequests,
    httpDuration,
    webhookDeliveries,
    /**
     * Counts a request in inbox_http_requests_total and its duration: the labels of a route
     * pattern, method and status are made once, not per request (every request passes here).
     */
    countRequest(method: string, route: string, status: number, seconds: number): void {
      let byMethod = requestSeries.get(route);
      if (byMethod === undefined) {
        byMethod = new Map();
        requestSeries.set(route, byMethod);
      }
      let series = byMethod.get(method);
      if (series === undefined) {
        series = { duration: { method, route }, byStatus: new Map() };
        byMethod.set(method, series);
      }
      let count = series.byStatus.get(status);
      if (count === undefined) {
        count = httpRequests.tally({ method, route, status: String(status) });
        series.byStatus.set(status, count);
      }
      count.n++;
      httpDuration.observe(series.duration, seconds);
    },
    /** Counts a provider delivery in inbox_webhook_deliveries_total (`integration` is a known key). */
    countDelivery(integration: string, outcome: 'accepted' | 'rejected'): void {
      const byKey = deliveryTallies[outcome];
      let tally = byKey.get(integration);
      if (tally === undefined) {
        tally = webhookDeliveries.tally({ integration, outcome });
        byKey.set(integration, tally);
      }
      tally.n++;
    },
    processing: new Counter({
      name: 'inbox_webhook_processing_total',
      help: 'Processing outcomes of deliveries (processed, failed, dead_letter, skipped)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    retriesScheduled: new Counter({
      name: 'inbox_webhook_retries_scheduled_total',
      help: 'Retries scheduled after a failed processing attempt',
      registers: [registry],
    }),
    batchDuration: new Histogram({
      name: 'inbox_webhook_batch_duration_seconds',
      help: 'Time to process one batch of deliveries',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [registry],
    }),
    processingLatency: new Histogram({
      name: 'inbox_webhook_processing_latency_seconds',
      help: 'Time from a delivery being received to its being processed',
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 60, 300],
      registers: [registry],
    }),
    inboxRowsDeleted: new Counter({
      name: 'inbox_rows_deleted_total',
      help: 'Inbox rows deleted by retention (processed, dead_letter)',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    outboundDeliveries: new Counter({
      name: 'inbox_outbound_webhook_deliveries_total',
      help: 'Outbound webhook attempts by outcome (succeeded, retry, failed: dead or not sent)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    outboundAttemptDuration: new Histogram({
      name: 'inbox_outbound_webhook_attempt_duration_seconds',
      help: 'Duration of outbound webhook attempts, from request to answer or failure',
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    conversationsDeleted: new Counter({
      name: 'inbox_conversations_deleted_total',
      help: "Threads deleted with their messages and files past their workspace's conversationRetentionDays",
      registers: [registry],
    }),
    inboxPartitionsDropped: new Counter({
      name: 'inbox_webhook_inbox_partitions_dropped_total',
      help: 'Day partitions of webhook_inbox dropped whole past INBOX_RETENTION_DAYS (their rows are not counted in inbox_rows_deleted_total)',
      registers: [registry],
    }),
    outboundEventsDeleted: new Counter({
      name: 'inbox_outbound_webhook_events_deleted_total',
      help: 'Outbound webhook events deleted past INBOX_RETENTION_DAYS, each with its deliveries and attempts',
      registers: [registry],
    }),
    outboundPartitionsDropped: new Counter({
      name: 'inbox_outbound_webhook_partitions_dropped_total',
      help: 'Days of outbound webhook events dropped whole past INBOX_RETENTION_DAYS with their deliveries and attempts (their rows are not counted in inbox_outbound_webhook_events_deleted_total)',
      registers: [registry],
    }),
    endpointsDisabled: new Counter({
      name: 'inbox_outbound_webhook_endpoints_disabled_total',
      help: 'Outbound webhook endpoints disabled by the service, by reason (gone: a 410; failing: 5 days without success; secret: its signing secret does not open)',
      labelNames: ['reason'] as const,
      registers: [registry],
    }),
    aiRequests: new Counter({
      name: 'inbox_ai_requests_total',
      help: 'AI assist calls by outcome (ok, disabled, rate_limited, refused, timeout, error, http_<status>)',
      labelNames: ['outcome'] as const,
      registers: [registry],
    }),
    sends: new Counter({
      name: 'inbox_reply_sends_total',
      help: 'Reply send attempts by integration and outcome (sent, failed, retry)',
      labelNames: ['integration', 'outcome'] as const,
      registers: [registry],
    }),
    sendDuration: new Histogram({
      name: 'inbox_reply_send_duration_seconds',
      help: "Time a provider took to answer a reply's send",
      labelNames: ['integration'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    livechatSockets: new Gauge({
      name: 'inbox_livechat_visitor_sockets',
      help: 'Live chat visitor sockets this process holds open',
      registers: [registry],
    }),
    livechatSocketsRefused: new Counter({
      name: 'inbox_livechat_visitor_sockets_refused_total',
      help: 'Visitor sockets closed with 4008 at once, by the limit reached (address, process)',
      labelNames: ['limit'] as const,
      registers: [registry],
    }),
    deadLetters: new Gauge({
      name: 'inbox_webhook_dead_letters',
      help: 'Deliveries in dead_letter (read from Postgres at scrape time)',
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'inbox_queue_jobs',
      help: 'pg-boss jobs by queue and state (read from Postgres at scrape time); a webhook-retry job carries the deliveries of one group commit, up to 500',
      labelNames: ['queue', 'state'] as const,
      registers: [registry],
    }),
    ready: new Gauge({
      name: 'inbox_ready',
      help: "1 when this process's last scrape-time read of Postgres (the queue's jobs, dead letters) succeeded, else 0",
      registers: [registry],
    }),
    oldestJobAge: new Gauge({
      name: 'inbox_queue_oldest_job_age_seconds',
      help: 'Age of the oldest job waiting in each queue, from when it became due (0 when none waits; read from Postgres at scrape time)',
      labelNames: ['queue'] as const,
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
