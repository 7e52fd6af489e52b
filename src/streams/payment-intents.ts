import type { PartnerApi } from '../api/partner-api.js';
import pMap from 'p-map';
import {
  salvagePaymentIntent,
  type PaymentIntent,
  type PaymentIntentStatus,
} from '../api/records/payment-intent.js';
import { effectivePageSize } from '../api/records/pagination.js';
import { cannotAlertAtFirstSight, classifyTransition } from '../sync/intent-transitions.js';
import {
  DEFAULT_POLL_SCHEDULE,
  nextPollAt,
  planIntentPolling,
  pollBudgetPerPass,
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
  pollAgainAt,
  recordFullObservation,
  saveIntentStreamState,
  type IntentStreamState,
} from '../warehouse/payment-intents.js';
import { storeRejections } from '../warehouse/rejected-records.js';
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
}

const DEFAULTS = {
  fullSweepEveryMs: 600_000,
  discoveryLookbackMs: 120_000,
  sweepPageSize: 500,
  concurrency: 8,
};

interface Fetch {
  id: string;
  why: 'changed' | 'first-sight' | 'due' | 'backfill';
  createdAt?: Date | undefined;
  /** The list form that asked for this fetch: what is known if the full form fails validation. */
  listed?: PaymentIntent;
}

/**
 * One pass over payment intents: a list sweep (newest first) that discovers new intents and re-reads
 * the status of every intent it passes, then by-id fetches of the full form for what changed, for
 * due open intents the sweep did not reach, and for rows only the list form has written. All within
 * `config.intents.pollShare` of the shared rate limit; see docs/payment-intents.md for the cost model.
 */
export async function runPaymentIntentsPass(
  deps: StreamDeps<PartnerApi>,
  options: PaymentIntentsPassOptions = {},
): Promise<PassOutcome> {
  const { db, api, clock, config, logger, metrics, signal } = deps;
  const log = logger.child({ stream: STREAM });
  const schedule = options.schedule ?? DEFAULT_POLL_SCHEDULE;
  const settings = { ...DEFAULTS, ...stripUndefined(options) };
  const startedAt = clock.now();
  const state = await loadIntentStreamState(db, startedAt);
  const payee = await currentAppWalletId(db);
  const budget = pollBudgetPerPass({
    rateLimitRps: config.api.rateLimitRps,
    pollShare: config.intents.pollShare,
    passIntervalMs: config.schedules.paymentIntentsMs,
  });
  const fullSweep =
    state.lastFullSweepAt === null ||
    startedAt.getTime() - state.lastFullSweepAt.getTime() >= settings.fullSweepEveryMs;
  const due = await findDueOpenIntents(db, { now: startedAt, payee, limit: Math.max(1_000, budget * 50) });
  const plan = planIntentPolling({
    due,
    pageSize: state.pageSize ?? settings.sweepPageSize,
    minSweepPages: 1,
    budget,
  });

  const stats = {
    requests: 0,
    pages: 0,
    firstSights: 0,
    transitions: 0,
    alerts: 0,
    fetched: 0,
    errors: 0,
    rejected: 0,
    salvaged: 0,
  };
  let lastError: string | undefined;
  const noteError = (error: unknown, what: Record<string, unknown>) => {
    stats.errors++;
    lastError = error instanceof Error ? error.message : String(error);
    // A pass cancelled by shutdown is not a failure of the API; the next pass picks up from here.
    if (signal?.aborted === true) log.debug({ ...what }, 'payment intent pass cancelled');
    else log.warn({ err: error, ...what }, 'payment intent request failed');
  };

  // ---- list sweep ----
  const horizon =
    state.newestCreatedAt === null
      ? null
      : new Date(state.newestCreatedAt.getTime() - settings.discoveryLookbackMs);
  const stopBelow = fullSweep ? null : olderOf(horizon, plan.sweepCoversCreatedAt);
  const maxPages = fullSweep ? Number.POSITIVE_INFINITY : Math.max(plan.sweepPages, budget);
  const seen = new Set<string>();
  const toFetch: Fetch[] = [];
  let newestSeen: Date | null = null;
  let reachedHorizon = false;
  let newestFirst = true;
  let previousCreatedAt: number | undefined;
  let serverPageSize: number | null = null;
  try {
    const pages = api.paymentIntentPages({
      ...(payee === undefined ? {} : { payee }),
      pageSize: settings.sweepPageSize,
      priority: 'high',
      signal,
    });
    for await (const page of pages) {
      stats.requests++;
      stats.pages++;
      serverPageSize = effectivePageSize(page.pagination, settings.sweepPageSize);
      const observedAt = clock.now();
      if (page.rejections.length > 0) {
        stats.rejected += page.rejections.length;
        metrics.recordsRejected.inc({ stream: STREAM }, page.rejections.length);
        await storeRejections(db, STREAM, page.rejections, observedAt);
      }
      for (const intent of page.records) {
        const created = intent.createdAt?.getTime();
        if (created !== undefined) {
          if (previousCreatedAt !== undefined && created > previousCreatedAt) newestFirst = false;
          previousCreatedAt = created;
          if (newestSeen === null || created > newestSeen.getTime()) newestSeen = intent.createdAt ?? null;
        }
      }
      stats.firstSights += await applyListPage(deps, page.records, {
        state,
        payee,
        schedule,
        observedAt,
        seen,
        toFetch,
      });
      if (page.pagination.nextPage === null) reachedHorizon = true;
      const oldestOnPage = previousCreatedAt;
      if (
        !fullSweep &&
        newestFirst &&
        stopBelow !== null &&
        oldestOnPage !== undefined &&
        oldestOnPage < stopBelow.getTime()
      ) {
        reachedHorizon = true;
        break;
      }
      if (stats.pages >= maxPages) break;
    }
    if (!newestFirst) log.warn('the payment intent list is not newest first: sweeps cannot stop early');
  } catch (error) {
    noteError(error, { during: 'list sweep' });
  }

  // ---- by-id fetches: changes first (alerts wait on them), then due polls, then backfill ----
  const remaining = () => Math.max(0, budget - stats.requests);
  const changes = toFetch.slice(0, Math.max(remaining(), 1));
  const deferredChanges = toFetch.slice(changes.length);
  // Due intents the sweep did not reach (the plan chose per-id polls for them, or new intents pushed
  // them deeper than estimated), most overdue first.
  const duePolls = due.filter((d) => !seen.has(d.id));
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
  await pMap(
    planned,
    async (fetch) => {
      if (signal?.aborted === true) return;
      const previous: PaymentIntentStatus | null = stored.get(fetch.id)?.status ?? null;
      try {
        stats.requests++;
        const result = await api.getPaymentIntent(fetch.id, { priority: 'high', signal });
        const observedAt = clock.now();
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
          if (previous === null) {
            if (fetch.createdAt) failedFirstSights.push(fetch.createdAt);
          } else {
            await markLookedAt(db, fetch.id, observedAt, { stopPolling: result === null });
          }
          return;
        }
        stats.fetched++;
        const before = stored.get(fetch.id);
        const outcome = await recordFullObservation(db, {
          intent,
          previous,
          observedAt,
          watchingSince: state.watchingSince,
          nextPollAt: nextPollAt(
            {
              now: observedAt,
              createdAt: intent.createdAt,
              expiresAt: intent.expiresAt,
              pollCount: (before?.pollCount ?? 0) + 1,
              status: intent.status,
            },
            schedule,
          ),
        });
        if (outcome.written && outcome.decision.transition) {
          stats.transitions++;
          if (previous === null) stats.firstSights++;
          log.info(
            {
              paymentIntentId: intent.id,
              from: outcome.decision.transition.from,
              to: outcome.decision.transition.to,
            },
            'payment intent transition',
          );
        }
        if (outcome.written && outcome.alertId !== null) {
          stats.alerts++;
          log.info(
            { paymentIntentId: intent.id, alertId: outcome.alertId },
            'payment_intent.paid alert recorded',
          );
        }
      } catch (error) {
        noteError(error, { paymentIntentId: fetch.id, why: fetch.why });
        if (previous === null && fetch.createdAt) failedFirstSights.push(fetch.createdAt);
      }
    },
    { concurrency: settings.concurrency },
  );

  // Changes the budget could not fetch this pass: due at once, so the next pass looks first.
  const finishedAt = clock.now();
  await pollAgainAt(
    db,
    deferredChanges.filter((f) => f.why === 'changed').map((f) => f.id),
    finishedAt,
  );
  for (const fetch of deferredChanges)
    if (fetch.why === 'first-sight' && fetch.createdAt) failedFirstSights.push(fetch.createdAt);

  await saveIntentStreamState(
    db,
    {
      ...(serverPageSize === null ? {} : { pageSize: serverPageSize }),
      ...(fullSweep && reachedHorizon && stats.errors === 0 ? { lastFullSweepAt: startedAt } : {}),
      ...nextHorizon({ state, newestSeen, reachedHorizon, failedFirstSights }),
    },
    finishedAt,
  );
  const open = await countOpenIntents(db);
  metrics.openIntents.set(open);
  metrics.rowsIngested.inc({ stream: STREAM }, stats.firstSights + stats.fetched);

  const details = {
    ...stats,
    budget,
    fullSweep,
    due: due.length,
    deferredChanges: deferredChanges.length,
    dueLeft: Math.max(0, duePolls.length - polls.length),
    open,
    payeeFilter: payee !== undefined,
  };
  const status = stats.errors === 0 ? 'succeeded' : stats.requests > stats.errors ? 'partial' : 'failed';
  return {
    status,
    rows: stats.firstSights + stats.fetched,
    requests: stats.requests,
    details,
    ...(lastError === undefined ? {} : { error: lastError }),
  };
}

/**
 * Sorts one list page: unchanged rows get their list fields refreshed (a poll, for free), first
 * sights that cannot alert are inserted from the list form, and changes (or first sights that might
 * alert) are queued for a by-id fetch of the full form. Returns the first sights inserted.
 */
async function applyListPage(
  deps: StreamDeps<PartnerApi>,
  records: readonly PaymentIntent[],
  context: {
    state: IntentStreamState;
    payee: string | undefined;
    schedule: PollSchedulePolicy;
    observedAt: Date;
    seen: Set<string>;
    toFetch: Fetch[];
  },
): Promise<number> {
  const { state, observedAt, schedule } = context;
  const fresh = records.filter((intent) => !context.seen.has(intent.id));
  for (const intent of fresh) context.seen.add(intent.id);
  const stored = await loadStoredIntents(
    deps.db,
    fresh.map((intent) => intent.id),
  );
  const unchanged: { intent: PaymentIntent; nextPollAt: Date | null }[] = [];
  const firstSights: PaymentIntent[] = [];
  for (const intent of fresh) {
    const row = stored.get(intent.id);
    if (row === undefined) {
      if (cannotAlertAtFirstSight(intent, state.watchingSince)) firstSights.push(intent);
      else
        context.toFetch.push({
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
        schedule,
      );
      unchanged.push({ intent, nextPollAt: next });
    } else if (!classifyTransition(row.status, intent, state.watchingSince).stale) {
      context.toFetch.push({ id: intent.id, why: 'changed', createdAt: intent.createdAt, listed: intent });
    }
  }
  await applyUnchangedListObservations(deps.db, unchanged, observedAt);
  const inserted = await insertFirstSightsFromList(deps.db, {
    intents: firstSights,
    payee: context.payee,
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
        schedule,
      ),
  });
  return inserted.length;
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
