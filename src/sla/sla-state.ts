import { Duration } from 'luxon';
import { type Static, Type } from 'typebox';
import type { BusinessHoursValue, SlaStatus } from '../db/types.js';
import { errors } from '../http/errors.js';
import { Nullable, StringEnum } from '../http/schemas.js';
import type { BusinessHours } from './business-hours.js';
import { addBusinessTime } from './business-time.js';

/**
 * A thread's SLA clock through one opening (docs/sla.md), as the `sla` column holds it, and the
 * rules that move it: pure, so each rule reads in one place and the writes stay in
 * ./sla.service.ts.
 */

export const SLA_TARGETS = ['firstResponse', 'nextResponse', 'resolution'] as const;
export type SlaTarget = (typeof SLA_TARGETS)[number];
export type SlaEventKind = 'warning' | 'breached';
export const SLA_STATUSES = ['ok', 'warning', 'breached'] as const;

/** The shortest target a policy may set. */
export const MIN_TARGET_MS = 10_000;
/** The longest: a year. */
export const MAX_TARGET_MS = 366 * 86_400_000;
/** The share of a target after which the thread is `warning`. */
export const WARNING_SHARE = 0.8;

/**
 * An ISO 8601 duration as milliseconds (a day is 24 hours, a week 7 days), or a 422 naming
 * `field`. Years and months have no fixed length and are refused.
 */
export function targetMs(iso: string, field: string): number {
  const d = Duration.fromISO(iso);
  if (!d.isValid) throw errors.validation(`${field}: "${iso.slice(0, 40)}" is not an ISO 8601 duration such as "PT1H" or "P1D"`);
  if (d.years !== 0 || d.quarters !== 0 || d.months !== 0)
    throw errors.validation(`${field}: years and months have no fixed length; use days ("P30D")`);
  const ms = d.as('milliseconds');
  if (!(ms >= MIN_TARGET_MS)) throw errors.validation(`${field}: at least PT10S`);
  if (ms > MAX_TARGET_MS) throw errors.validation(`${field}: at most P366D`);
  return ms;
}

/** One target's clock: started when, due when, warned from when; met (or stopped) when. */
export interface TargetClock {
  startedAt: string;
  warnAt: string;
  dueAt: string;
  metAt: string | null;
}

export interface SlaBreach {
  target: SlaTarget;
  dueAt: string;
  breachedAt: string;
}

export interface SlaState {
  policyId: number;
  openedAt: string;
  /** The policy's targets in milliseconds, as they were when it applied. */
  targetMs: Partial<Record<SlaTarget, number>>;
  businessHoursOnly: boolean;
  clocks: Partial<Record<SlaTarget, TargetClock>>;
  breaches: SlaBreach[];
  /** Moments reached, `target:kind:dueAt`: each is recorded once, and `status` follows them. */
  told: string[];
  /**
   * Moments announced (sockets, endpoints, notifications), `target:kind:startedAt`: a clock's
   * warning and breach are announced once per opening, even when another policy moved its due
   * time. Absent on clocks set before it was kept.
   */
  announced?: string[];
  /** A reply came after the contact's last message: the contact's next one starts nextResponse. */
  replied: boolean;
  /** The thread was resolved: every clock stopped. */
  resolvedAt: string | null;
}

/** What a policy contributes to a clock. */
export interface PolicyTargets {
  id: number;
  businessHoursOnly: boolean;
  targetMs: Partial<Record<SlaTarget, number>>;
}

export const SlaResource = Nullable(
  Type.Object(
    {
      policyId: Type.Integer(),
      firstResponseDueAt: Nullable(Type.String({ format: 'date-time', description: 'null once met, or without that target' })),
      nextResponseDueAt: Nullable(Type.String({ format: 'date-time', description: 'running from a contact message that follows a reply' })),
      resolutionDueAt: Nullable(Type.String({ format: 'date-time' })),
      status: StringEnum(SLA_STATUSES),
      breaches: Type.Array(
        Type.Object({
          target: StringEnum(SLA_TARGETS),
          dueAt: Type.String({ format: 'date-time' }),
          breachedAt: Type.String({ format: 'date-time' }),
        }),
      ),
    },
    { description: "the SLA of the thread's current opening; null without a policy (docs/sla.md)" },
  ),
);
export type Sla = Static<typeof SlaResource>;

const running = (c: TargetClock | undefined): c is TargetClock => c !== undefined && c.metAt === null;
const key = (target: SlaTarget, kind: SlaEventKind, dueAt: string) => `${target}:${kind}:${dueAt}`;

/**
 * A clock of `target` under `targets` from `startedAt`; undefined when the policy sets none, or
 * when the hours do not hold that much open time within three years (docs/sla.md): no due time
 * rather than a failed change.
 */
function clock(
  hours: BusinessHours | null,
  targets: Pick<PolicyTargets, 'businessHoursOnly' | 'targetMs'>,
  target: SlaTarget,
  startedAt: Date,
) {
  const ms = targets.targetMs[target];
  if (ms === undefined) return undefined;
  const h = targets.businessHoursOnly ? hours : null;
  const warnAt = addBusinessTime(h, startedAt, Math.round(ms * WARNING_SHARE));
  const dueAt = addBusinessTime(h, startedAt, ms);
  if (!warnAt || !dueAt) return undefined;
  return { startedAt: startedAt.toISOString(), warnAt: warnAt.toISOString(), dueAt: dueAt.toISOString(), metAt: null };
}

/** A new opening (a thread created or reopened) under `policy`. */
export function openSla(policy: PolicyTargets, hours: BusinessHoursValue | null, at: Date): SlaState {
  const h = hours as BusinessHours | null;
  const clocks: SlaState['clocks'] = {};
  for (const target of ['firstResponse', 'resolution'] as const) {
    const c = clock(h, policy, target, at);
    if (c) clocks[target] = c;
  }
  return {
    policyId: policy.id,
    openedAt: at.toISOString(),
    targetMs: policy.targetMs,
    businessHoursOnly: policy.businessHoursOnly,
    clocks,
    breaches: [],
    told: [],
    announced: [],
    replied: false,
    resolvedAt: null,
  };
}

/** What happened in an opening before a policy came to time it (sla.queries' `currentOpening`). */
export interface OpeningSoFar {
  /** The first reply of a user or API key in the opening. */
  firstReplyAt: Date | null;
  /** The contact's first message after the last such reply: a next response is due from it. */
  waitingSince: Date | null;
}

/**
 * A policy that applies first after the opening (its priority, team or labels changed): the
 * clocks run from the opening as if it had applied then. A reply of a user or API key given
 * since has met the first response, and a contact's message after the last reply runs the
 * next response from it.
 */
export function lateSla(policy: PolicyTargets, hours: BusinessHoursValue | null, openedAt: Date, so: OpeningSoFar): SlaState {
  let state = openSla(policy, hours, openedAt);
  if (so.firstReplyAt) state = replied(state, so.firstReplyAt);
  if (so.firstReplyAt && so.waitingSince) state = contactWrote(state, hours, so.waitingSince);
  return state;
}

/**
 * Another policy now applies within the same opening (its priority, team or labels changed):
 * each clock still running starts again from where it started, under the new targets; met
 * clocks, breaches and what was told stay. A target the old policy did not time starts as if
 * it had: a first response is met at `so.firstReplyAt` when a user or API key has replied in
 * this opening, and a next response runs from `so.waitingSince` when the contact waits for one.
 * Null when no policy applies any more.
 */
export function changePolicy(
  state: SlaState | null,
  policy: PolicyTargets | null,
  hours: BusinessHoursValue | null,
  so: OpeningSoFar = { firstReplyAt: null, waitingSince: null },
): SlaState | null {
  // Without a clock yet the caller opens one (openSla); without a policy there is none.
  if (!policy || !state) return null;
  const h = hours as BusinessHours | null;
  const clocks: SlaState['clocks'] = {};
  for (const target of SLA_TARGETS) {
    const before = state.clocks[target];
    if (before && !running(before)) {
      clocks[target] = before;
      continue;
    }
    const untimedSince = target === 'nextResponse' ? (state.replied ? null : so.waitingSince) : new Date(state.openedAt);
    const startedAt = before ? new Date(before.startedAt) : untimedSince;
    if (!startedAt || state.resolvedAt) continue;
    const c = clock(h, policy, target, startedAt);
    if (c) clocks[target] = !before && target === 'firstResponse' && so.firstReplyAt ? { ...c, metAt: so.firstReplyAt.toISOString() } : c;
  }
  return { ...state, policyId: policy.id, targetMs: policy.targetMs, businessHoursOnly: policy.businessHoursOnly, clocks };
}

/**
 * The breaches of `targets` due by `at` that their jobs have not recorded yet (a worker late or
 * away): a target met at or after its due time was breached all the same. Recorded as the job
 * would have (so its job, when it comes, tells nothing more), at the due time.
 */
function overdue(state: SlaState, targets: readonly SlaTarget[], at: Date): SlaState {
  let out = state;
  for (const target of targets) {
    const c = out.clocks[target];
    if (!running(c) || Date.parse(c.dueAt) > at.getTime()) continue;
    const fired = fire(out, target, 'breached', c.dueAt, new Date(c.dueAt));
    if (fired) out = fired.state;
  }
  return out;
}

/** A reply of a user or an API key: it meets first and next response. */
export function replied(before: SlaState, at: Date): SlaState {
  const state = overdue(before, ['firstResponse', 'nextResponse'], at);
  const clocks = { ...state.clocks };
  for (const target of ['firstResponse', 'nextResponse'] as const) {
    const c = clocks[target];
    if (running(c)) clocks[target] = { ...c, metAt: at.toISOString() };
  }
  return { ...state, clocks, replied: true };
}

/** A contact's message: after a reply, it starts the next-response clock. */
export function contactWrote(state: SlaState, hours: BusinessHoursValue | null, at: Date): SlaState {
  if (!state.replied || state.resolvedAt) return state;
  const c = clock(hours as BusinessHours | null, state, 'nextResponse', at);
  return { ...state, replied: false, clocks: c ? { ...state.clocks, nextResponse: c } : state.clocks };
}

/** Resolving meets the resolution target and stops every clock. */
export function resolved(before: SlaState, at: Date): SlaState {
  const state = overdue(before, SLA_TARGETS, at);
  const clocks = { ...state.clocks };
  for (const target of SLA_TARGETS) {
    const c = clocks[target];
    if (running(c)) clocks[target] = { ...c, metAt: at.toISOString() };
  }
  return { ...state, clocks, resolvedAt: at.toISOString() };
}

/**
 * The warning or breach of `target` due at `at` (a job's), recorded once: the state with it,
 * and whether to announce it (false when this clock's moment was announced already, before
 * another policy moved its due time), or null when there is nothing to record (met
 * meanwhile, moved, or already recorded).
 */
export function fire(
  state: SlaState,
  target: SlaTarget,
  kind: SlaEventKind,
  at: string,
  now: Date,
): { state: SlaState; announce: boolean } | null {
  const c = state.clocks[target];
  if (!running(c) || (kind === 'warning' ? c.warnAt : c.dueAt) !== at) return null;
  const told = key(target, kind, c.dueAt);
  if (state.told.includes(told)) return null;
  const moment = `${target}:${kind}:${c.startedAt}`;
  const announced = state.announced ?? [];
  const announce = !announced.includes(moment);
  const breaches =
    kind === 'breached' && announce ? [...state.breaches, { target, dueAt: c.dueAt, breachedAt: now.toISOString() }] : state.breaches;
  return {
    state: { ...state, told: [...state.told, told], announced: announce ? [...announced, moment] : announced, breaches },
    announce,
  };
}

/** The moments jobs must wake at for `after` that `before` did not already have. */
export function wakeUps(before: SlaState | null, after: SlaState | null): { target: SlaTarget; kind: SlaEventKind; at: string }[] {
  if (!after) return [];
  const out: { target: SlaTarget; kind: SlaEventKind; at: string }[] = [];
  for (const target of SLA_TARGETS) {
    const c = after.clocks[target];
    if (!running(c)) continue;
    const b = before?.clocks[target];
    for (const [kind, at] of [
      ['warning', c.warnAt],
      ['breached', c.dueAt],
    ] as const) {
      const had = running(b) && (kind === 'warning' ? b.warnAt : b.dueAt) === at;
      if (!had && !after.told.includes(key(target, kind, c.dueAt))) out.push({ target, kind, at });
    }
  }
  return out;
}

/** The status the lists filter on: breached once any target was, warning while a running one has warned. */
export function statusOf(state: SlaState): SlaStatus {
  if (state.breaches.length > 0) return 'breached';
  const warned = SLA_TARGETS.some((t) => {
    const c = state.clocks[t];
    return running(c) && state.told.includes(key(t, 'warning', c.dueAt));
  });
  return warned ? 'warning' : 'ok';
}

/** The nearest due time of the clocks still running: what `?sort=sla` orders by. */
export function nearestDue(state: SlaState | null): Date | null {
  if (!state) return null;
  const dues = SLA_TARGETS.map((t) => state.clocks[t])
    .filter(running)
    .map((c) => Date.parse(c.dueAt));
  return dues.length === 0 ? null : new Date(Math.min(...dues));
}

/** The `sla` of the Thread resource. */
export function slaResource(value: unknown): Sla {
  if (!value) return null;
  const state = value as SlaState;
  const due = (t: SlaTarget) => {
    const c = state.clocks[t];
    return running(c) ? c.dueAt : null;
  };
  return {
    policyId: state.policyId,
    firstResponseDueAt: due('firstResponse'),
    nextResponseDueAt: due('nextResponse'),
    resolutionDueAt: due('resolution'),
    status: statusOf(state),
    breaches: state.breaches,
  };
}
