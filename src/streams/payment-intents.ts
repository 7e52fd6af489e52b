import { setTimeout as sleep } from 'node:timers/promises';
import pMap from 'p-map';
import type { PartnerApi } from '../api/partner-api.js';
import {
  salvagePaymentIntent,
  type PaymentIntent,
  type PaymentIntentStatus,
} from '../records/payment-intent.js';
import { effectivePageSize } from '../records/pagination.js';
import { driftOf } from '../records/parse.js';
import { cannotAlertAtFirstSight, classifyTransition } from '../sync/intent-transitions.js';
import {
  DEFAULT_POLL_SCHEDULE,
  nextPollAt,
  planIntentPolling,
  pollBudgetPerPass,
  type DueIntent,
  type PollSchedulePolicy,
} from '../sync/intent-poll-schedule.js';
import { currentAppWalletId } from '../warehouse/balance.js';
import {
  applyUnchangedListObservations,
  countOpenIntents,
  findDueOpenIntents,
  findRowsWithoutFullForm,
  insertFirstSightsFromList,
  loadIntentStreamState,
  loadStoredIntents,
  markLookedAt,
  openIntentsReach,
  pollAgainNow,
  recordFullObservation,
  saveIntentStreamState,
  type FullObservationOutcome,
  type IntentStreamState,
  type StoredIntent,
} from '../warehouse/payment-intents.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import { deliverAlertsSoon } from './alerts.js';
import { noteSchemaDrift } from './schema-drift.js';
import { driftCounts } from '../records/schema-drift.js';
import { stopsThePass } from './pass-stop.js';
import type { PassOutcome, StreamDeps } from './stream.js';

const STREAM = 'payment_intents';

export interface PaymentIntentsPassOptions {
  schedule?: PollSchedulePolicy;
  /** Read the whole list this often (refunds of old intents, late arrivals, the first import). */
  fullSweepEveryMs?: number;
  /** Discovery re-reads this far below the newest intent already processed (clock skew, late visibility). */
  discoveryLookbackMs?: number;
  /** Asked for on sweeps; the server's `pagination.page_size` is what counts. */
  sweepPageSize?: number;
  /** By-id fetches in flight at once (the shared limiter paces them). */
  concurrency?: number;
  /**
   * Keep ticking this long while intents are open (the worker passes the time to its next
   * scheduled pass). Absent: one tick, as `run payment_intents` wants.
   */
  slotMs?: number;
  /** Shortest time between two ticks of one pass (the bound on detection latency while active). */
  tickEveryMs?: number;
}

const DEFAULTS = {
  fullSweepEveryMs: 600_000,
  discoveryLookbackMs: 120_000,
  sweepPageSize: 500,
  concurrency: 8,
  slotMs: 0,
  tickEveryMs: 1_000,
};

type Settings = typeof DEFAULTS & { schedule: PollSchedulePolicy };

interface Fetch {
  id: string;
  why: 'changed' | 'first-sight' | 'due' | 'backfill';
  createdAt?: Date | undefined;
  /** The list form that asked for this fetch: what is known if the full form fails validation. */
  listed?: PaymentIntent;
}

/** Counters of one tick, summed over a pass. */
interface TickStats {
  requests: number;
  pages: number;
  firstSights: number;
  transitions: number;
  alerts: number;
  /** Payments seen in the list whose alert needs no by-id fetch, and the alerts so raised. */
  paidSeenInList: number;
  alertsFromList: number;
  fetched: number;
  errors: number;
  rejected: number;
  salvaged: number;
}

const emptyStats = (): TickStats => ({
  requests: 0,
  pages: 0,
  firstSights: 0,
  transitions: 0,
  alerts: 0,
  paidSeenInList: 0,
  alertsFromList: 0,
  fetched: 0,
  errors: 0,
  rejected: 0,
  salvaged: 0,
});

/** What one tick shares between its steps. */
interface Tick {
  deps: StreamDeps<PartnerApi>;
  settings: Settings;
  state: IntentStreamState;
  payee: string | undefined;
  startedAt: Date;
  budget: number;
  stats: TickStats;
  /** The stream's logger (bound to `stream: payment_intents`). */
  log: StreamDeps<PartnerApi>['logger'];
  lastError?: string;
  noteError(error: unknown, what: Record<string, unknown>): void;
}

/**
 * One pass over payment intents: ticks of a list sweep (newest first) that discovers new intents,
 * re-reads the status of every open intent it can afford to pass and raises the paid alert from the
 * list form when the warehouse already holds the rest, then by-id fetches of the full form for what
 * else changed, due open intents the sweep did not reach, and rows only the list form has written.
 * With `slotMs` (the worker), it keeps ticking every `tickEveryMs` while intents are open, paced to
 * stay within `config.intents.pollShare` of the shared rate limit; idle, it is one tick. Alerts are
 * delivered as soon as they commit. Cost model: docs/payment-intents.md.
 */
export async function runPaymentIntentsPass(
  deps: StreamDeps<PartnerApi>,
  options: PaymentIntentsPassOptions = {},
): Promise<PassOutcome> {
  const { clock, config, signal } = deps;
  const settings: Settings = {
    ...DEFAULTS,
    ...stripUndefined(options),
    schedule: options.schedule ?? DEFAULT_POLL_SCHEDULE,
  };
  const passStartedMs = clock.now().getTime();
  const share = config.api.rateLimitRps * config.intents.pollShare;
  const totals = emptyStats();
  const aborted = () => signal?.aborted === true;
  let ticks = 0;
  let last: Awaited<ReturnType<typeof runIntentTick>>;
  for (;;) {
    // A single tick plans for the whole schedule interval; repeated ticks for one tick interval.
    const intervalMs = settings.slotMs > 0 ? settings.tickEveryMs : config.schedules.paymentIntentsMs;
    const tickStartedMs = clock.now().getTime();
    last = await runIntentTick(deps, settings, intervalMs);
    ticks++;
    addStats(totals, last.stats);
    if (settings.slotMs <= 0 || last.open === 0 || aborted()) break;
    // Paced so the average stays within the share, however many pages the sweep needed.
    const nextTickMs = tickStartedMs + Math.max(settings.tickEveryMs, (last.stats.requests / share) * 1000);
    if (nextTickMs >= passStartedMs + settings.slotMs) break;
    const waitMs = nextTickMs - clock.now().getTime();
    if (waitMs > 0) await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    if (aborted()) break;
  }
  deps.metrics.rowsIngested.inc({ stream: STREAM }, totals.firstSights + totals.fetched);
  const status = totals.errors === 0 ? 'succeeded' : totals.requests > totals.errors ? 'partial' : 'failed';
  return {
    status,
    rows: totals.firstSights + totals.fetched,
    requests: totals.requests,
    details: { ...totals, ticks, ...last.details },
    ...(last.lastError === undefined ? {} : { error: last.lastError }),
  };
}

async function runIntentTick(deps: StreamDeps<PartnerApi>, settings: Settings, intervalMs: number) {
  const { db, clock, config, logger, signal } = deps;
  const log = logger.child({ stream: STREAM });
  const startedAt = clock.now();
  const tick: Tick = {
    deps,
    settings,
    state: await loadIntentStreamState(db, startedAt),
    payee: await currentAppWalletId(db),
    startedAt,
    budget: pollBudgetPerPass({
      rateLimitRps: config.api.rateLimitRps,
      pollShare: config.intents.pollShare,
      passIntervalMs: intervalMs,
    }),
    stats: emptyStats(),
    log,
    noteError(error, what) {
      this.stats.errors++;
      this.lastError = error instanceof Error ? error.message : String(error);
      // A pass cancelled by shutdown is not a failure of the API; the next pass picks up from here.
      if (signal?.aborted === true) log.debug({ ...what }, 'payment intent pass cancelled');
      else log.warn({ err: error, ...what }, 'payment intent request failed');
    },
  };
  const fullSweep =
    tick.state.lastFullSweepAt === null ||
    startedAt.getTime() - tick.state.lastFullSweepAt.getTime() >= settings.fullSweepEveryMs;
  const due = await findDueOpenIntents(db, {
    payee: tick.payee,
    limit: Math.max(1_000, tick.budget * 50),
  });
  const sweep = await sweepIntentList(tick, { due, fullSweep });
  const fetches = await fetchFullForms(tick, { due, sweep });

  // Changes the budget could not fetch this tick: due at once, so the next tick looks first.
  const finishedAt = clock.now();
  await pollAgainNow(
    db,
    fetches.deferredChanges.filter((f) => f.why === 'changed').map((f) => f.id),
  );
  for (const fetch of fetches.deferredChanges)
    if (fetch.why === 'first-sight' && fetch.createdAt) fetches.failedFirstSights.push(fetch.createdAt);
  await saveIntentStreamState(
    db,
    {
      ...(sweep.serverPageSize === null ? {} : { pageSize: sweep.serverPageSize }),
      ...(fullSweep && sweep.reachedHorizon && tick.stats.errors === 0 ? { lastFullSweepAt: startedAt } : {}),
      ...nextHorizon({ ...sweep, state: tick.state, failedFirstSights: fetches.failedFirstSights }),
    },
    finishedAt,
  );
  const open = await countOpenIntents(db);
  deps.metrics.openIntents.set(open);
  return {
    stats: tick.stats,
    open,
    lastError: tick.lastError,
    details: {
      budget: tick.budget,
      fullSweep,
      due: due.length,
      deferredChanges: fetches.deferredChanges.length,
      dueLeft: fetches.dueLeft,
      open,
      payeeFilter: tick.payee !== undefined,
    },
  };
}

interface SweepResult {
  /** Intents the list showed this tick. */
  seen: Set<string>;
  /** Changes (and first sights that may alert) the list cannot settle: fetched by id. */
  toFetch: Fetch[];
  newestSeen: Date | null;
  reachedHorizon: boolean;
  serverPageSize: number | null;
}

/**
 * The list sweep, newest first: down to the discovery horizon, past every open intent when the
 * budget affords it (so a payment anywhere among them is seen this tick), or the whole list on a
 * full sweep. Each page is applied as it arrives (applyListPage).
 */
async function sweepIntentList(
  tick: Tick,
  input: { due: readonly DueIntent[]; fullSweep: boolean },
): Promise<SweepResult> {
  const { deps, settings, state, stats } = tick;
  const { db, api, clock, metrics, signal } = deps;
  const pageSize = state.pageSize ?? settings.sweepPageSize;
  const reach = await openIntentsReach(db, tick.payee);
  const pagesForAllOpen = reach === null ? 1 : Math.floor(reach.depth / pageSize) + 1;
  const coverAllOpen = reach !== null && pagesForAllOpen <= tick.budget;
  const plan = planIntentPolling({
    due: input.due,
    pageSize,
    minSweepPages: coverAllOpen ? pagesForAllOpen : 1,
    budget: tick.budget,
  });
  const horizon =
    state.newestCreatedAt === null
      ? null
      : new Date(state.newestCreatedAt.getTime() - settings.discoveryLookbackMs);
  const stopBelow = input.fullSweep
    ? null
    : olderOf(olderOf(horizon, plan.sweepCoversCreatedAt), coverAllOpen ? reach.oldestCreatedAt : null);
  const maxPages = input.fullSweep ? Number.POSITIVE_INFINITY : Math.max(plan.sweepPages, tick.budget);
  const result: SweepResult = {
    seen: new Set(),
    toFetch: [],
    newestSeen: null,
    reachedHorizon: false,
    serverPageSize: null,
  };
  let newestFirst = true;
  let previousCreatedAt: number | undefined;
  try {
    const pages = api.paymentIntentPages({
      ...(tick.payee === undefined ? {} : { payee: tick.payee }),
      pageSize: settings.sweepPageSize,
      priority: 'high',
      signal,
    });
    for await (const page of pages) {
      stats.requests++;
      stats.pages++;
      result.serverPageSize = effectivePageSize(page.pagination, settings.sweepPageSize);
      const observedAt = clock.now();
      if (page.rejections.length > 0) {
        stats.rejected += page.rejections.length;
        metrics.recordsRejected.inc({ stream: STREAM }, page.rejections.length);
        await storeRejections(db, STREAM, page.rejections, observedAt);
      }
      for (const intent of page.records) {
        const created = intent.createdAt?.getTime();
        if (created === undefined) continue;
        if (previousCreatedAt !== undefined && created > previousCreatedAt) newestFirst = false;
        previousCreatedAt = created;
        if (result.newestSeen === null || created > result.newestSeen.getTime())
          result.newestSeen = intent.createdAt ?? null;
      }
      await applyListPage(tick, page.records, { observedAt, sweep: result });
      await noteSchemaDrift(tick.deps, 'payment_intents.list', page.drift);
      if (page.pagination.nextPage === null) result.reachedHorizon = true;
      const oldestOnPage = previousCreatedAt;
      if (
        !input.fullSweep &&
        newestFirst &&
        stopBelow !== null &&
        oldestOnPage !== undefined &&
        oldestOnPage < stopBelow.getTime()
      ) {
        result.reachedHorizon = true;
        break;
      }
      if (stats.pages >= maxPages) break;
    }
    if (!newestFirst) tick.log.warn('the payment intent list is not newest first: sweeps cannot stop early');
  } catch (error) {
    if (stopsThePass(error)) throw error;
    tick.noteError(error, { during: 'list sweep' });
  }
  return result;
}

/**
 * Sorts one list page: unchanged rows get their list fields refreshed (a poll, for free); a pending
 * intent now `paid` whose full form the warehouse holds is recorded and alerted from the list form
 * at once (paid_at = the list's updated_at: confirming sets paid_at and moves updated_at in one
 * write); first sights that cannot alert are inserted from the list form; other changes, and first
 * sights that might alert, are queued for a by-id fetch of the full form.
 */
async function applyListPage(
  tick: Tick,
  records: readonly PaymentIntent[],
  context: { observedAt: Date; sweep: SweepResult },
): Promise<void> {
  const { deps, state, settings, stats } = tick;
  const { observedAt, sweep } = context;
  const fresh = records.filter((intent) => !sweep.seen.has(intent.id));
  for (const intent of fresh) sweep.seen.add(intent.id);
  const stored = await loadStoredIntents(
    deps.db,
    fresh.map((intent) => intent.id),
  );
  const unchanged: { intent: PaymentIntent; nextPollAt: Date | null }[] = [];
  const firstSights: PaymentIntent[] = [];
  const paidFromList: { intent: PaymentIntent; previous: PaymentIntentStatus }[] = [];
  for (const intent of fresh) {
    const row = stored.get(intent.id);
    if (row === undefined) {
      if (cannotAlertAtFirstSight(intent, state.watchingSince)) firstSights.push(intent);
      else
        sweep.toFetch.push({
          id: intent.id,
          why: 'first-sight',
          createdAt: intent.createdAt,
          listed: intent,
        });
    } else if (row.status === intent.status) {
      const next = nextPollAt(
        {
          now: observedAt,
          createdAt: intent.createdAt ?? row.createdAt ?? undefined,
          expiresAt: row.hasFullForm ? row.expiresAt : undefined,
          pollCount: row.pollCount + 1,
          status: row.status,
        },
        settings.schedule,
      );
      unchanged.push({ intent, nextPollAt: next });
    } else if (!classifyTransition(row.status, intent, state.watchingSince).stale) {
      const alertable = intent.status === 'paid' && row.status === 'pending' && row.hasFullForm;
      if (alertable) paidFromList.push({ intent: paidIntentFromList(intent, row), previous: row.status });
      else sweep.toFetch.push({ id: intent.id, why: 'changed', createdAt: intent.createdAt, listed: intent });
    }
  }
  await applyUnchangedListObservations(deps.db, unchanged, observedAt);
  const inserted = await insertFirstSightsFromList(deps.db, {
    intents: firstSights,
    payee: tick.payee,
    observedAt,
    nextPollAt: (intent) =>
      nextPollAt(
        {
          now: observedAt,
          createdAt: intent.createdAt,
          expiresAt: undefined,
          pollCount: 1,
          status: intent.status,
        },
        settings.schedule,
      ),
  });
  stats.firstSights += inserted.length;
  stats.paidSeenInList += paidFromList.length;
  for (const { intent, previous } of paidFromList) {
    const outcome = await recordFullObservation(deps.db, {
      intent,
      previous,
      observedAt,
      watchingSince: state.watchingSince,
      nextPollAt: null,
      events: deps.config.alerts.events,
    });
    noteObservation(tick, intent, { previous, outcome, fromList: true });
  }
}

/** The list form of a payment, completed with what the warehouse holds of its full form. */
function paidIntentFromList(listed: PaymentIntent, row: StoredIntent): PaymentIntent {
  return {
    ...listed,
    ...(listed.updatedAt === undefined ? {} : { paidAt: listed.updatedAt }),
    ...(row.payerAccountBalanceId === null ? {} : { payerAccountBalanceId: row.payerAccountBalanceId }),
    ...(row.payeeAccountBalanceId === null ? {} : { payeeAccountBalanceId: row.payeeAccountBalanceId }),
    ...(row.metadata === null ? {} : { metadata: row.metadata }),
  };
}

/** Counts a recorded observation, logs its transition, and starts delivering its alert at once. */
function noteObservation(
  tick: Tick,
  intent: PaymentIntent,
  input: { previous: PaymentIntentStatus | null; outcome: FullObservationOutcome; fromList: boolean },
): void {
  const { outcome, previous } = input;
  const { log } = tick;
  if (!outcome.written) return;
  if (outcome.decision.transition) {
    tick.stats.transitions++;
    if (previous === null) tick.stats.firstSights++;
    const { from, to } = outcome.decision.transition;
    log.info({ paymentIntentId: intent.id, from, to }, 'payment intent transition');
  }
  if (outcome.alertId === null) return;
  tick.stats.alerts++;
  if (input.fromList) tick.stats.alertsFromList++;
  const type = outcome.eventType ?? 'payment_intent.paid';
  log.info({ paymentIntentId: intent.id, alertId: outcome.alertId, type }, `${type} alert recorded`);
  // In the background: the tick never waits for the receiver (docs/payment-intents.md).
  deliverAlertsSoon(tick.deps, [outcome.alertId]);
}

/**
 * By-id fetches within what is left of the budget: changes first (alerts wait on them), then due
 * open intents the sweep did not reach, then rows only the list form has written.
 */
async function fetchFullForms(
  tick: Tick,
  input: { due: readonly DueIntent[]; sweep: SweepResult },
): Promise<{ deferredChanges: Fetch[]; failedFirstSights: Date[]; dueLeft: number }> {
  const { deps, settings, stats } = tick;
  const { db } = deps;
  const remaining = () => Math.max(0, tick.budget - stats.requests);
  const { toFetch, seen } = input.sweep;
  const changes = toFetch.slice(0, Math.max(remaining(), 1));
  const deferredChanges = toFetch.slice(changes.length);
  // Due intents the sweep did not reach (the plan chose per-id polls for them, or new intents pushed
  // them deeper than estimated), most overdue first.
  const duePolls = input.due.filter((d) => !seen.has(d.id));
  const polls: Fetch[] = duePolls
    .slice(0, Math.max(0, remaining() - changes.length))
    .map((d) => ({ id: d.id, why: 'due' }));
  const planned = [...changes, ...polls];
  const backfill = await findRowsWithoutFullForm(db, {
    limit: Math.max(0, remaining() - planned.length),
    exclude: planned.map((f) => f.id),
  });
  planned.push(...backfill.map((id): Fetch => ({ id, why: 'backfill' })));

  const stored = await loadStoredIntents(
    db,
    planned.map((f) => f.id),
  );
  const failedFirstSights: Date[] = [];
  // After an error that stops the pass, no further fetch starts; those in flight finish.
  let stopped: Error | undefined;
  await pMap(
    planned,
    async (fetch) => {
      if (deps.signal?.aborted === true || stopped !== undefined) return;
      const previous = stored.get(fetch.id)?.status ?? null;
      try {
        const recorded = await fetchAndRecord(tick, fetch, stored.get(fetch.id));
        if (!recorded && previous === null && fetch.createdAt) failedFirstSights.push(fetch.createdAt);
      } catch (error) {
        if (stopsThePass(error)) {
          stopped ??= error;
          return;
        }
        tick.noteError(error, { paymentIntentId: fetch.id, why: fetch.why });
        if (previous === null && fetch.createdAt) failedFirstSights.push(fetch.createdAt);
      }
    },
    { concurrency: settings.concurrency },
  );
  if (stopped !== undefined) throw stopped;
  return { deferredChanges, failedFirstSights, dueLeft: Math.max(0, duePolls.length - polls.length) };
}

/**
 * One by-id fetch and what it means: the full form recorded; or, when it fails validation, the
 * fields that validate (salvagePaymentIntent) with the full form in rejected_records; or, on a 404,
 * polling stops. Returns whether anything was recorded.
 */
async function fetchAndRecord(tick: Tick, fetch: Fetch, before: StoredIntent | undefined): Promise<boolean> {
  const { deps, settings, state, stats } = tick;
  const { db, api, clock, metrics, signal } = deps;
  const { log } = tick;
  const previous = before?.status ?? null;
  stats.requests++;
  const result = await api.getPaymentIntent(fetch.id, { priority: 'high', signal });
  const observedAt = clock.now();
  if (result !== null) await noteSchemaDrift(deps, 'payment_intents', driftCounts(driftOf(result)));
  let intent: PaymentIntent | null = result?.ok === true ? result.record : null;
  if (result === null) {
    log.warn({ paymentIntentId: fetch.id }, 'payment intent no longer exists (404); polling stops');
  } else if (!result.ok) {
    stats.rejected++;
    metrics.recordsRejected.inc({ stream: STREAM });
    await storeRejections(db, STREAM, [result.rejection], observedAt);
    intent = salvagePaymentIntent(fetch.id, result.rejection.payload, fetch.listed);
    if (intent !== null) stats.salvaged++;
    log.warn(
      { paymentIntentId: fetch.id, reason: result.rejection.reason, salvaged: intent !== null },
      intent === null
        ? 'payment intent full form rejected; nothing usable in it'
        : 'payment intent full form rejected; recorded from the fields that validated',
    );
  }
  if (intent === null) {
    if (previous !== null) await markLookedAt(db, fetch.id, observedAt, { stopPolling: result === null });
    return false;
  }
  stats.fetched++;
  const outcome = await recordFullObservation(db, {
    intent,
    previous,
    observedAt,
    watchingSince: state.watchingSince,
    events: deps.config.alerts.events,
    nextPollAt: nextPollAt(
      {
        now: observedAt,
        createdAt: intent.createdAt,
        expiresAt: intent.expiresAt,
        pollCount: (before?.pollCount ?? 0) + 1,
        status: intent.status,
      },
      settings.schedule,
    ),
  });
  noteObservation(tick, intent, { previous, outcome, fromList: false });
  return true;
}

/**
 * The discovery horizon moves only when the sweep read down to the old one (or the end of the list),
 * and never past a first sight that could not be recorded, so nothing new is skipped by the next pass.
 */
function nextHorizon(input: {
  state: IntentStreamState;
  newestSeen: Date | null;
  reachedHorizon: boolean;
  failedFirstSights: Date[];
}): { newestCreatedAt?: Date | null } {
  if (!input.reachedHorizon || input.newestSeen === null) return {};
  let horizon = input.newestSeen.getTime();
  for (const createdAt of input.failedFirstSights) horizon = Math.min(horizon, createdAt.getTime() - 1);
  return { newestCreatedAt: new Date(horizon) };
}

function addStats(into: TickStats, from: TickStats): void {
  for (const key of Object.keys(into) as (keyof TickStats)[]) into[key] += from[key];
}

function olderOf(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() <= b.getTime() ? a : b;
}

function stripUndefined<T extends object>(value: T): { [K in keyof T]-?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]-?: Exclude<T[K], undefined>;
  };
}
