import type { PartnerApi } from '../../api/partner-api.js';
import { advanceRound, nextHorizon } from '../../sync/intent-sweep-plan.js';
import {
  dueLookupLimit,
  earnFullFormCredit,
  fullFormReserve,
  maxRoundRows,
  fullSweepDue as fullSweepDueAt,
} from '../../sync/intent-tick-plan.js';
import { currentAppWalletId } from '../../warehouse/balance.js';
import {
  loadIntentStreamState,
  saveIntentStreamState,
  type IntentStreamState,
} from '../../warehouse/intent-stream-state.js';
import {
  countOpenIntents,
  findUnreachableDueIntents,
  hasRowsWithoutFullForm,
  openIntentsReach,
  type OpenIntentsReach,
} from '../../warehouse/payment-intent-polling.js';
import type { DueIntent } from '../../sync/intent-poll-schedule.js';
import { pollAgainNow } from '../../warehouse/payment-intents.js';
import type { StreamDeps } from '../stream.js';
import { streamAllowance } from '../stream-budget.js';
import { fetchFullForms, type FetchesResult } from './full-form.js';
import { INTENTS_STREAM } from './stream-name.js';
import { sweepIntentList, type RoundRead, type SweepResult } from './sweep.js';
import { emptyTickStats, type IntentPassSettings, type Tick, type TickStats } from './tick-context.js';

export interface TickOutcome {
  stats: TickStats;
  /** What the tick was allowed to spend (its pacing: the next tick waits until that rate is kept). */
  budget: number;
  /** Whether it read list pages (a round in progress): the next tick follows at the allowance's pace. */
  readRound: boolean;
  /** Open intents after the tick: the pass keeps ticking while there are any. */
  open: number;
  lastError: string | undefined;
  details: Record<string, unknown>;
}

/** What the pass carries from tick to tick. */
export interface TickCarry {
  /** The full-form credit (fullFormReserve). */
  fullFormCredit: number;
  /** Open intents counted at the end of the last tick: the next one plans with it (one query less). */
  open?: number;
}

/**
 * One tick: this tick's part of the list round, then the by-id fetches within what is left of its
 * budget (the full-form reserve at least), then the stream state (the round, the discovery horizon,
 * the full round's time, the server page size) for the next tick. The budget is the intents'
 * allowance of the one budget over `intervalMs` for what is due (at least `shareBudget`, their
 * INTENT_POLL_SHARE, while they have work).
 */
export async function runIntentTick(
  deps: StreamDeps<PartnerApi>,
  settings: IntentPassSettings,
  plan: {
    shareBudget: number;
    intervalMs: number;
    carry: TickCarry;
    /** Requests the tick adds for starting late (lateStartCatchUp): its pages, not its pacing. */
    catchUp?: number;
    /** The most the tick spends, catch-up included (slotRemainderCap). */
    cap?: number;
  },
): Promise<TickOutcome> {
  const { db, clock } = deps;
  const inputs = await readTickInputs(deps, settings, plan);
  const { due } = inputs;
  // The list round's pages (one per page of open intents, page 0 discovers) plus one by-id read per
  // due intent no round reaches.
  const pagesWanted = Math.max(1, Math.ceil(inputs.open / Math.max(1, settings.sweepPageSize)));
  const budget = await intentsAllowance(deps, plan, pagesWanted + due.length);
  const demand = due.length > 0 || inputs.awaitingFullForm;
  const spend = Math.max(
    1,
    Math.min(plan.cap ?? Number.POSITIVE_INFINITY, budget + Math.max(0, Math.floor(plan.catchUp ?? 0))),
  );
  const split = fullFormReserve(plan.carry.fullFormCredit, { budget: spend, demand });
  const tick = startTick(deps, settings, { budget: spend, reserve: split.reserve }, inputs);
  const fullSweepDue = fullSweepDueAt(tick.state.lastFullSweepAt, tick.startedAt, settings.fullSweepEveryMs);
  const sweep = await sweepIntentList(tick, { fullSweepDue, pageBudget: split.pageBudget });
  const fetches = await fetchFullForms(tick, { due, sweep });
  await finishTick(tick, { sweep, fetches, finishedAt: clock.now() });
  plan.carry.fullFormCredit = earnFullFormCredit(split.credit, {
    requests: tick.stats.requests,
    share: settings.fullFormShare,
    budget: spend,
  });
  const openAfter = (plan.carry.open = await countOpenIntents(db));
  deps.metrics.openIntents.set(openAfter);
  tick.stats.allowed += budget;
  return {
    stats: tick.stats,
    budget,
    readRound: tick.stats.pages > 0,
    open: openAfter,
    lastError: tick.lastError,
    details: {
      budget,
      spend,
      fullFormReserve: split.reserve,
      ...roundDetails(sweep),
      due: due.length,
      deferredChanges: fetches.deferredChanges.length,
      dueLeft: fetches.dueLeft,
      open: openAfter,
      payeeFilter: tick.payee !== undefined,
    },
  };
}

/** Where the rounds stand after the tick, for the pass's details. */
function roundDetails(sweep: SweepResult): Record<string, unknown> {
  return {
    roundPage: sweep.open?.nextPage ?? null,
    roundCompleted: sweep.open?.completed ?? null,
    fullRoundPage: sweep.full?.nextPage ?? null,
  };
}

/**
 * The allocation's answer, never below the share; the share alone when the ledger cannot be read
 * (the limiter still holds every process to the limit: the ledger is accounting, not the limit).
 */
async function intentsAllowance(
  deps: StreamDeps<PartnerApi>,
  plan: { shareBudget: number; intervalMs: number },
  demand: number,
): Promise<number> {
  try {
    const { allowance } = await streamAllowance(deps, 'payment_intents', {
      intervalMs: plan.intervalMs,
      demand,
    });
    return Math.max(plan.shareBudget, Math.floor(allowance));
  } catch (error) {
    deps.logger.debug(
      { err: error, stream: INTENTS_STREAM },
      'spend ledger unreadable: the tick plans within its share',
    );
    return plan.shareBudget;
  }
}

/** What a tick plans with, read at once (the queries are independent: one round trip's wait, not eight). */
interface TickInputs {
  startedAt: Date;
  payee: string | undefined;
  state: IntentStreamState;
  due: DueIntent[];
  open: number;
  awaitingFullForm: boolean;
  reach: OpenIntentsReach | null;
}

async function readTickInputs(
  deps: StreamDeps<PartnerApi>,
  settings: IntentPassSettings,
  plan: { shareBudget: number; intervalMs: number; carry: TickCarry },
): Promise<TickInputs> {
  const { db, clock } = deps;
  const startedAt = clock.now();
  const payee = await currentAppWalletId(db);
  const roundRows = maxRoundRows({
    shareRps: plan.shareBudget / (plan.intervalMs / 1000),
    pageSize: settings.sweepPageSize,
    reachSeconds: settings.roundReachSeconds,
  });
  const [state, due, open, awaitingFullForm, reach] = await Promise.all([
    loadIntentStreamState(db, INTENTS_STREAM, startedAt),
    findUnreachableDueIntents(db, {
      payee,
      limit: dueLookupLimit(plan.shareBudget),
      maxRoundRows: roundRows,
    }),
    plan.carry.open ?? countOpenIntents(db),
    hasRowsWithoutFullForm(db),
    openIntentsReach(db, payee, roundRows),
  ]);
  return { startedAt, payee, state, due, open, awaitingFullForm, reach };
}

function startTick(
  deps: StreamDeps<PartnerApi>,
  settings: IntentPassSettings,
  spend: { budget: number; reserve: number },
  inputs: TickInputs,
): Tick {
  const { logger, signal } = deps;
  const log = logger.child({ stream: INTENTS_STREAM });
  const tick: Tick = {
    deps,
    settings,
    state: inputs.state,
    payee: inputs.payee,
    startedAt: inputs.startedAt,
    budget: spend.budget,
    fullFormReserve: spend.reserve,
    fullFormRoom: spend.reserve,
    reach: inputs.reach,
    stats: emptyTickStats(),
    log,
    noteError(error, what) {
      this.stats.errors++;
      this.lastError = error instanceof Error ? error.message : String(error);
      // A pass cancelled by shutdown is not a failure of the API; the next pass picks up from here.
      if (signal?.aborted === true) log.debug({ ...what }, 'payment intent pass cancelled');
      else log.warn({ err: error, ...what }, 'payment intent request failed');
    },
  };
  return tick;
}

/**
 * Changes the budget could not fetch this tick are due at once; each round continues from where it
 * stopped. When the open round completes, the discovery horizon moves to the newest intent it read
 * (never past a first sight that was not recorded); when a full round completes without errors, it
 * counts as the full sweep (and sets the first horizon).
 */
async function finishTick(
  tick: Tick,
  input: { sweep: SweepResult; fetches: FetchesResult; finishedAt: Date },
): Promise<void> {
  const { db } = tick.deps;
  const { sweep, fetches } = input;
  await pollAgainNow(
    db,
    fetches.deferredChanges.filter((f) => f.why === 'changed').map((f) => f.id),
  );
  const failedFirstSights = [...fetches.failedFirstSights];
  for (const fetch of fetches.deferredChanges)
    if (fetch.why === 'first-sight' && fetch.createdAt) failedFirstSights.push(fetch.createdAt);
  const failed = tick.stats.errors > 0;
  const advance = (read: RoundRead) => advanceRound(read.round, { ...read, failedFirstSights, failed });
  const horizonOf = (read: RoundRead) => {
    const cap = read.round.horizonCap;
    return nextHorizon({
      newestSeen: newerOf(read.round.newestSeen, read.newestSeen),
      reachedHorizon: true,
      failedFirstSights:
        cap === null ? failedFirstSights : [...failedFirstSights, new Date(cap.getTime() + 1)],
    });
  };
  let patch: Partial<IntentStreamState> = {};
  if (sweep.open !== null) {
    const round = advance(sweep.open);
    patch = { round, ...(round === null ? horizonOf(sweep.open) : {}) };
    if (round === null) tick.stats.rounds++;
  }
  if (sweep.full !== null) {
    const fullRound = advance(sweep.full);
    patch = { ...patch, fullRound };
    if (fullRound === null && !sweep.full.round.failed && !failed)
      patch = {
        ...patch,
        lastFullSweepAt: sweep.full.round.startedAt,
        ...(tick.state.newestCreatedAt === null && patch.newestCreatedAt === undefined
          ? horizonOf(sweep.full)
          : {}),
      };
  }
  await saveIntentStreamState(
    db,
    INTENTS_STREAM,
    { ...(sweep.serverPageSize === null ? {} : { pageSize: sweep.serverPageSize }), ...patch },
    input.finishedAt,
  );
}

function newerOf(a: Date | null, b: Date | null): Date | null {
  if (a === null) return b;
  if (b === null) return a;
  return a.getTime() >= b.getTime() ? a : b;
}
