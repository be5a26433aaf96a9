import { sql } from 'kysely';
import type { Job } from 'pg-boss';
import { openingKeys, SecretBoxError } from '../crypto/secret-box.js';
import { PgListener } from '../db/listener.js';
import type { Deps } from '../deps.js';
import { HEARTBEAT_SECONDS, jobsIn } from '../jobs/queue.js';
import { systemResolve } from '../net/address-guard.js';
import { packageVersion } from '../version.js';
import { ATTEMPT_TIMEOUT_MS, WebhookSender } from './attempt.js';
import { absorbDeliveries, findDispatchContexts, recordAttempts } from './deliveries.queries.js';
import { signingSecrets } from './endpoint-secrets.js';
import { clearFailureStreaks, disableEndpoints, endpointIdsOf, endpointWorkspaces, startFailureStreaks } from './endpoints.queries.js';
import { type AttemptJob, enqueueAttempts, JOB_DELIVERIES, OUTBOUND_CHANNEL, OUTBOUND_QUEUE, takeOverJobs } from './outbound.enqueue.js';
import { type Context, FAILING_REASON, GONE_REASON, type Held, type Result, SECRET_REASON, settle } from './settle.js';
import { webhookHeaders } from './signing.js';

/** At most this many deliveries of one endpoint are in flight, across every worker process (docs/outbound-webhooks.md). */
export const ENDPOINT_IN_FLIGHT = 10;

/** Jobs (endpoints) one process works on at once: at most 20 × 10 deliveries in flight. */
export const PROCESS_JOBS = 20;
/** One workspace's share of those: the other half stays free for every other workspace. */
export const WORKSPACE_JOBS = PROCESS_JOBS / 2;
/**
 * A job that starts this long after its deliveries were due, or still has attempts out this
 * long after it started, takes in its endpoint's deliveries queued behind it (runJob).
 */
export const ABSORB_AFTER_MS = 1_000;
/**
 * What a job may still take once it stops taking in: its at most JOB_DELIVERIES, ten at a time,
 * each within the attempt's timeout, and the ten out when it stopped. A job takes in only until
 * its queue's expiry less this (a minute of 2 minutes): pg-boss expires a job that has been
 * active that long however alive its heartbeats, and hands it out again while it is still being
 * worked, so its deliveries would go out twice and twenty at a time.
 */
export const ABSORB_RESERVE_MS = (JOB_DELIVERIES / ENDPOINT_IN_FLIGHT + 1) * ATTEMPT_TIMEOUT_MS;
/** When nothing wakes it, the dispatcher looks for due retries this often. */
const POLL_MS = 1_000;
/** Held jobs' heartbeats are sent at half the queue's heartbeatSeconds. */
const HEARTBEAT_MS = (HEARTBEAT_SECONDS * 1000) / 2;
/**
 * A job starts attempts only while a heartbeat sent this recently confirmed it: the one due
 * HEARTBEAT_MS after the last may take 3 s to answer, and 2 s are left before the lapse. The
 * supervisor hands a job whose heartbeat is HEARTBEAT_SECONDS old to the next worker at once, and
 * a process alive but unable to refresh it (its database away, its event loop stalled) would
 * otherwise go on sending the same deliveries beside that worker.
 */
const CLAIM_MS = (HEARTBEAT_SECONDS - 2) * 1000;

type Fetched = Job<AttemptJob>;

/**
 * Sends outbound webhooks. A job holds up to 50 deliveries of one endpoint and pg-boss lets
 * one job per endpoint be active at a time (its group), across every worker process; the job
 * sends its deliveries ten at a time (ENDPOINT_IN_FLIGHT). So a slow or hanging receiver holds
 * only its own ten, and every other endpoint's job goes on at once. Outcomes are recorded in
 * one transaction for whatever finished meanwhile (attempt rows, delivery state, retry jobs,
 * endpoint health), and the commit of a job's last outcome completes the job.
 *
 * A delivery is at least once: a process that dies after a receiver answered and before the
 * outcome committed leaves the job active; it expires, comes back and its unrecorded deliveries
 * are sent again, with the same delivery id, which is what the receiver dedupes on. The outcome
 * commit does not wait for its WAL flush for the same reason: a database crash in that instant
 * can only repeat a delivery, never lose one.
 */
export class Dispatcher {
  private readonly sender: WebhookSender;
  private readonly listener: PgListener;
  private readonly userAgent = `inbox-webhooks/${packageVersion()}`;
  private activeJobs = 0;
  private stopping = false;
  private woken = false;
  private wake: (() => void) | undefined;
  private loopDone: Promise<void> | undefined;
  private readonly running = new Set<Promise<void>>();
  private readonly held = new Set<Held>();
  /** Jobs held per workspace, so that none takes more than WORKSPACE_JOBS of the slots. */
  private readonly workspaceJobs = new Map<number, number>();
  private heartbeat: NodeJS.Timeout | undefined;
  private pending: Result[] = [];
  private flushing: Promise<void> | undefined;
  /**
   * Whether each endpoint being worked has a failure streak, as its job read it and as this
   * process's commits changed it since: a commit touches an endpoint row only to start or end
   * a streak, never on every success.
   */
  private readonly streaking = new Map<number, boolean>();

  constructor(private readonly deps: Deps) {
    this.sender = new WebhookSender({
      allowPrivate: deps.config.allowPrivateWebhookUrls,
      resolve: deps.resolveHost ?? systemResolve,
      userAgent: this.userAgent,
    });
    // Whatever was notified while the listener was down is looked for when it is back.
    this.listener = new PgListener(deps, OUTBOUND_CHANNEL, 'inbox-webhooks-out', {
      notification: () => this.poke(),
      connected: () => this.poke(),
    });
  }

  start(): void {
    void this.listener.start();
    this.loopDone = this.loop();
    // A job whose heartbeat stops (its process died) goes back to the queue within seconds.
    this.heartbeat = setInterval(() => {
      const held = [...this.held];
      if (held.length === 0) return;
      const sentAt = performance.now();
      this.deps.boss
        .touch(
          OUTBOUND_QUEUE,
          held.map((h) => ({ id: h.job.id, retryCount: h.job.retryCount })),
        )
        .then((touched) => {
          // The ids it refreshed (typed CommandResponse leaves them out; pg-boss's own workers read
          // them the same way). Without them nothing is known, and nothing is changed.
          const settled = (touched as { settled?: string[] }).settled;
          if (!settled) return;
          // Fenced to the attempt fetched: a job not refreshed was handed out again (or has just
          // completed), and is no longer this process's to send.
          const refreshed = new Set(settled);
          for (const h of held) {
            if (refreshed.has(h.job.id)) h.confirmedAt = Math.max(h.confirmedAt, sentAt);
            else if (h.confirmedAt !== -Infinity && this.held.has(h)) {
              h.confirmedAt = -Infinity;
              this.deps.log.warn({ jobId: h.job.id }, 'outbound webhooks: a job was taken away; it starts no more attempts here');
            }
          }
        })
        .catch((err: unknown) => this.deps.log.warn({ err }, 'outbound webhooks: heartbeat failed'));
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * Stops fetching, lets attempts in flight finish (each within its timeout) and records them.
   * A job's deliveries not yet sent are not started: the job, not completed, comes back.
   */
  async stop(): Promise<void> {
    this.stopping = true;
    this.poke();
    await this.loopDone;
    await Promise.all(this.running);
    await this.flushing;
    clearInterval(this.heartbeat);
    await this.listener.close();
    await this.sender.close();
  }

  private poke(): void {
    this.woken = true;
    this.wake?.();
  }

  private async loop(): Promise<void> {
    while (!this.stopping) {
      this.woken = false;
      const free = PROCESS_JOBS - this.activeJobs;
      if (free > 0) {
        // The claim's heartbeat_on is set by the fetch, so no earlier than this.
        const fetchedAt = performance.now();
        let jobs: Fetched[] = [];
        let owners = new Map<number, number>();
        try {
          // Fairness between workspaces: a workspace holding its half is left out of the
          // fetch (its endpoints are the groups ignored), and no fetch brings more jobs than
          // the busiest remaining workspace may still take. So a workspace whose receivers
          // all hang holds at most half the slots, and another's jobs start at once.
          const full = [...this.workspaceJobs].filter(([, n]) => n >= WORKSPACE_JOBS).map(([id]) => id);
          const busiest = Math.max(0, ...[...this.workspaceJobs].filter(([, n]) => n < WORKSPACE_JOBS).map(([, n]) => n));
          const ignoreGroups = (await endpointIdsOf(this.deps.db, full)).map(String);
          jobs = await this.deps.boss.fetch<AttemptJob>(OUTBOUND_QUEUE, {
            batchSize: Math.min(free, WORKSPACE_JOBS - busiest),
            groupConcurrency: 1,
            ...(ignoreGroups.length > 0 ? { ignoreGroups } : {}),
          });
          owners = await endpointWorkspaces(
            this.deps.db,
            jobs.map((j) => Number(j.groupId)),
          );
        } catch (err) {
          // A job fetched and not started expires and comes back.
          jobs = [];
          if (this.stopping) break;
          this.deps.log.warn({ err }, 'outbound webhooks: fetching jobs failed; retrying');
        }
        if (jobs.length > 0) {
          this.activeJobs += jobs.length;
          for (const job of jobs) {
            const run = this.runJob(job, owners.get(Number(job.groupId)), fetchedAt)
              // Nothing a job meets may end the process: it is logged, and the job, still
              // active, expires and comes back.
              .catch((err: unknown) => this.deps.log.error({ err, jobId: job.id }, 'outbound webhooks: a job failed unexpectedly'))
              .finally(() => this.running.delete(run));
            this.running.add(run);
          }
          continue;
        }
      }
      if (this.woken || this.stopping) continue;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, POLL_MS);
        this.wake = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.wake = undefined;
    }
  }

  private async runJob(job: Fetched, workspaceId: number | undefined, fetchedAt: number): Promise<void> {
    // Taking in ends in time for the job to end before its queue's expiry (ABSORB_RESERVE_MS).
    const absorbUntil = this.deps.now().getTime() + job.expireInSeconds * 1000 - ABSORB_RESERVE_MS;
    const ids = [...(job.data.deliveryIds ?? [])];
    const held: Held = { job, workspaceId, total: Math.max(ids.length, 1), committed: 0, confirmedAt: fetchedAt };
    this.held.add(held);
    if (workspaceId !== undefined) this.workspaceJobs.set(workspaceId, (this.workspaceJobs.get(workspaceId) ?? 0) + 1);
    let contexts: Map<number, Context>;
    try {
      contexts = new Map((await findDispatchContexts(this.deps.db, ids, job.data.eventIds)).map((c) => [c.id, c]));
    } catch (err) {
      // The job stays active and comes back when it expires.
      this.deps.log.warn({ err }, 'outbound webhooks: reading deliveries failed');
      this.activeJobs--;
      this.release(held);
      return;
    }
    if (ids.length === 0) return this.record({ kind: 'stale', held });
    for (const c of contexts.values()) this.streaking.set(c.endpoint_id, c.failing_since !== null);
    let recorded = 0;
    const out = (r: Result) => {
      recorded++;
      this.record(r);
    };
    let secrets: string[] | null | undefined;
    let next = 0;
    let lanes = 0;
    let lanesEnded: (() => void) | undefined;
    const tasks = new Set<Promise<void>>();
    const track = (task: Promise<void>) => {
      tasks.add(task);
      const done = () => tasks.delete(task);
      task.then(done, done);
    };
    // Lanes pull the job's deliveries in order, ten at most: ten in flight to this endpoint.
    const lane = async () => {
      lanes++;
      try {
        // A stopping process sends nothing more, nor does a job whose claim is not confirmed: what
        // the job has not sent waits for its next run.
        while (next < ids.length && !this.stopping && this.claimed(held)) {
          const ctx = contexts.get(ids[next++]!);
          const at = this.deps.now();
          if (ctx?.status !== 'pending' || ctx.job_id !== job.id) {
            out({ kind: 'stale', held });
            continue;
          }
          if (!ctx.enabled && ctx.event_type !== 'ping') {
            out({ kind: 'disabled', held, ctx, at });
            continue;
          }
          secrets ??= this.openSecrets(ctx, at);
          if (secrets === null) {
            out({ kind: 'unsealable', held, ctx, at });
            continue;
          }
          const headers = webhookHeaders(
            {
              scheme: ctx.signature_scheme,
              secrets,
              deliveryId: ctx.id,
              eventType: ctx.event_type,
              timestamp: Math.floor(at.getTime() / 1000),
              body: ctx.body,
            },
            this.userAgent,
          );
          const attempt = await this.sender.post(ctx.url, headers, ctx.body);
          this.deps.metrics.outboundAttemptDuration.observe(attempt.durationMs / 1000);
          out({ kind: 'attempted', held, ctx, at, attempt });
        }
      } finally {
        if (--lanes === 0) lanesEnded?.();
      }
    };
    const spawnLanes = () => {
      for (let n = Math.min(ENDPOINT_IN_FLIGHT - lanes, ids.length - next); n > 0; n--) track(lane());
    };

    // A job holds one commit's deliveries of its endpoint (often one), and its endpoint's other
    // jobs wait behind it. A slow receiver would so get one or two at a time: a job that started
    // late, or still has attempts out after ABSORB_AFTER_MS, takes in the deliveries queued
    // behind it, up to JOB_DELIVERIES, and goes on doing so each ABSORB_AFTER_MS while its
    // attempts are out, until absorbUntil. A job of a fast receiver ends before and never reads for more.
    const endpointId = Number(job.groupId);
    const live = [...contexts.values()].filter((c) => c.status === 'pending' && c.job_id === job.id && c.next_attempt_at);
    const since = live.length > 0 ? new Date(Math.min(...live.map((c) => c.next_attempt_at!.getTime()))) : undefined;
    // Each delivery's event id, as the job's data carries them (jobs from before the tables
    // were partitioned carry none, and keep none).
    const eventIds = job.data.eventIds ? [...job.data.eventIds] : undefined;
    let abandoned = false;
    const absorb = async () => {
      // The job completes only after this outcome of its own, recorded when absorbing ends.
      held.total++;
      try {
        while (!this.stopping && this.claimed(held) && ids.length < JOB_DELIVERIES && this.deps.now().getTime() < absorbUntil) {
          const more = await this.deps.db.transaction().execute(async (trx) => {
            const rows = await absorbDeliveries(
              trx,
              { endpointId, jobId: job.id, own: ids, since: since!, limit: JOB_DELIVERIES - ids.length },
              this.deps.now(),
            );
            if (rows.length === 0) return rows;
            const owned: AttemptJob = { deliveryIds: [...ids, ...rows.map((r) => r.id)] };
            if (eventIds) owned.eventIds = [...eventIds, ...rows.map((r) => r.event_id)];
            await takeOverJobs(
              this.deps.boss,
              trx,
              job.id,
              owned,
              rows.flatMap((r) => (r.previous_job_id ? [r.previous_job_id] : [])),
            );
            return rows;
          });
          for (const r of more) {
            contexts.set(r.id, r);
            ids.push(r.id);
            eventIds?.push(r.event_id);
          }
          held.total += more.length;
          spawnLanes();
          if (more.length === 0 && lanes === 0) break;
          if (lanes === 0) continue;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, ABSORB_AFTER_MS);
            lanesEnded = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          lanesEnded = undefined;
        }
        out({ kind: 'stale', held });
      } catch (err) {
        // Whether the deliveries moved is unknown (a commit whose answer was lost): the job is
        // given up once its lanes end, expires and comes back with what its data names.
        abandoned = true;
        this.deps.log.warn({ err, endpointId, jobId: job.id }, 'outbound webhooks: taking in queued deliveries failed');
      }
    };
    let timer: NodeJS.Timeout | undefined;
    if (since && ids.length < JOB_DELIVERIES && !Number.isNaN(endpointId)) {
      if (this.deps.now().getTime() - since.getTime() >= ABSORB_AFTER_MS) track(absorb());
      else
        timer = setTimeout(() => {
          // Only while an outcome is still to come: a job whose last one is recorded may be completing.
          if (recorded < held.total) track(absorb());
        }, ABSORB_AFTER_MS);
    }
    spawnLanes();
    while (tasks.size > 0) await Promise.all(tasks);
    clearTimeout(timer);
    if (abandoned || next < ids.length) {
      // Its last outcome is never recorded (or, stopping, it left deliveries unsent), so no
      // commit completes it; without heartbeats it expires and comes back.
      this.activeJobs--;
      this.release(held);
      this.poke();
    }
  }

  /** Whether a heartbeat confirmed the job is this process's recently enough to start an attempt (CLAIM_MS). */
  private claimed(held: Held): boolean {
    return performance.now() - held.confirmedAt < CLAIM_MS;
  }

  /** The endpoint's signing secrets, or null when they do not open (logged once per job). */
  private openSecrets(ctx: Context, at: Date): string[] | null {
    try {
      return signingSecrets(openingKeys(this.deps), { ...ctx, id: ctx.endpoint_id }, at);
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      this.deps.log.error({ endpointId: ctx.endpoint_id, err }, 'outbound webhooks: an endpoint signing secret does not open');
      return null;
    }
  }

  private release(held: Held): void {
    this.held.delete(held);
    const ws = held.workspaceId;
    if (ws === undefined) return;
    const n = (this.workspaceJobs.get(ws) ?? 1) - 1;
    if (n > 0) this.workspaceJobs.set(ws, n);
    else this.workspaceJobs.delete(ws);
  }

  /** Queues an outcome for the next commit; one commit runs at a time and takes all that waits. */
  private record(result: Result): void {
    this.pending.push(result);
    this.flushing ??= this.flush();
  }

  private async flush(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        const finished = await this.commit(batch);
        this.activeJobs -= finished;
        if (finished > 0) this.poke();
      } catch (err) {
        this.deps.log.error({ err, outcomes: batch.length }, 'outbound webhooks: recording outcomes failed; retrying');
        this.pending.unshift(...batch);
        await new Promise((r) => setTimeout(r, 1_000));
        // Jobs left uncommitted expire and are attempted again: the delivery repeats, never vanishes.
        if (this.stopping) break;
      }
    }
    this.flushing = undefined;
  }

  /** Records a batch of outcomes in one transaction (what settle decided); returns how many jobs it completed. */
  private async commit(batch: Result[]): Promise<number> {
    const now = this.deps.now();
    const { counts, done, attempts, settlements, starting, ending, gone, stale, staleBefore, unsealable, outcomes } = settle(
      batch,
      this.streaking,
      now,
    );
    const disabled = await this.deps.db.transaction().execute(async (trx) => {
      await sql`SET LOCAL synchronous_commit = off`.execute(trx);
      const changed = await recordAttempts(trx, attempts, settlements, now);
      await enqueueAttempts(
        this.deps.boss,
        trx,
        changed
          .filter((d) => d.status === 'pending')
          .map((d) => ({
            deliveryId: d.id,
            eventId: d.event_id,
            endpointId: d.endpoint_id,
            jobId: d.job_id!,
            startAfter: d.next_attempt_at!,
          })),
      );
      await startFailureStreaks(trx, starting, now);
      await clearFailureStreaks(trx, ending);
      const off =
        gone.length > 0 || stale.length > 0 ? await disableEndpoints(trx, gone, GONE_REASON, stale, staleBefore, FAILING_REASON, now) : [];
      if (unsealable.length > 0)
        off.push(...(await disableEndpoints(trx, unsealable, SECRET_REASON, [], staleBefore, FAILING_REASON, now)));
      // Fenced by the attempt fetched: a job that expired and was claimed again is not ours to complete.
      if (done.length > 0)
        await this.deps.boss.complete(
          OUTBOUND_QUEUE,
          done.map((h) => ({ id: h.job.id, retryCount: h.job.retryCount })),
          null,
          { db: jobsIn(trx) },
        );
      return off;
    });
    for (const [h, n] of counts) h.committed += n;
    for (const h of done) this.release(h);
    for (const id of starting) this.streaking.set(id, true);
    for (const id of ending) this.streaking.set(id, false);
    for (const o of outcomes) this.deps.metrics.outboundDeliveries.inc({ outcome: o });
    for (const e of disabled) {
      this.deps.metrics.endpointsDisabled.inc({
        reason: e.disabled_reason === GONE_REASON ? 'gone' : e.disabled_reason === SECRET_REASON ? 'secret' : 'failing',
      });
      this.deps.log.warn(
        { endpointId: e.id, workspaceId: e.workspace_id, reason: e.disabled_reason },
        'outbound webhook endpoint disabled',
      );
    }
    return done.length;
  }
}
