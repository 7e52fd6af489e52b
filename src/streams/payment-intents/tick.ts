import type { PartnerApi } from '../../api/partner-api.js';
import { nextHorizon } from '../../sync/intent-sweep-plan.js';
import { dueLookupLimit, fullSweepDue } from '../../sync/intent-tick-plan.js';
import { currentAppWalletId } from '../../warehouse/balance.js';
import { loadIntentStreamState, saveIntentStreamState } from '../../warehouse/intent-stream-state.js';
import { countOpenIntents, findDueOpenIntents } from '../../warehouse/payment-intent-polling.js';
import { pollAgainNow } from '../../warehouse/payment-intents.js';
import type { StreamDeps } from '../stream.js';
import { streamAllowance } from '../stream-budget.js';
import { fetchFullForms, type FetchesResult } from './full-form.js';
import { INTENTS_STREAM } from './stream-name.js';
import { sweepIntentList, type SweepResult } from './sweep.js';
import { emptyTickStats, type IntentPassSettings, type Tick, type TickStats } from './tick-context.js';

export interface TickOutcome {
  stats: TickStats;
  /** What the tick was allowed to spend (its pacing: the next tick waits until that rate is kept). */
  budget: number;
  /** Open intents after the tick: the pass keeps ticking while there are any. */
  open: number;
  lastError: string | undefined;
  details: Record<string, unknown>;
}

/**
 * One tick: the list sweep, then the by-id fetches within what is left of its budget, then the
 * stream state (discovery horizon, full sweep time, server page size) for the next tick. The budget
 * is the intents' allowance of the one budget over `intervalMs` for what is due (at least
 * `shareBudget`, their INTENT_POLL_SHARE, while they have work).
 */
export async function runIntentTick(
  deps: StreamDeps<PartnerApi>,
  settings: IntentPassSettings,
  plan: { shareBudget: number; intervalMs: number },
): Promise<TickOutcome> {
  const { db, clock } = deps;
  const payee = await currentAppWalletId(db);
  const due = await findDueOpenIntents(db, { payee, limit: dueLookupLimit(plan.shareBudget) });
  // One sweep page at least (discovery), plus one by-id read per due intent.
  const budget = await intentsAllowance(deps, plan, due.length + 1);
  const tick = await startTick(deps, settings, budget, payee);
  const fullSweep = fullSweepDue(tick.state.lastFullSweepAt, tick.startedAt, settings.fullSweepEveryMs);
  const sweep = await sweepIntentList(tick, { due, fullSweep });
  const fetches = await fetchFullForms(tick, { due, sweep });
  await finishTick(tick, { fullSweep, sweep, fetches, finishedAt: clock.now() });
  const open = await countOpenIntents(db);
  deps.metrics.openIntents.set(open);
  return {
    stats: tick.stats,
    budget,
    open,
    lastError: tick.lastError,
    details: {
      budget,
      fullSweep,
      due: due.length,
      deferredChanges: fetches.deferredChanges.length,
      dueLeft: fetches.dueLeft,
      open,
      payeeFilter: tick.payee !== undefined,
    },
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

async function startTick(
  deps: StreamDeps<PartnerApi>,
  settings: IntentPassSettings,
  budget: number,
  payee: string | undefined,
): Promise<Tick> {
  const { db, clock, logger, signal } = deps;
  const log = logger.child({ stream: INTENTS_STREAM });
  const startedAt = clock.now();
  const tick: Tick = {
    deps,
    settings,
    state: await loadIntentStreamState(db, INTENTS_STREAM, startedAt),
    payee,
    startedAt,
    budget,
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
 * Changes the budget could not fetch this tick are due at once, so the next tick looks first; the
 * horizon never passes a first sight that was not recorded.
 */
async function finishTick(
  tick: Tick,
  input: { fullSweep: boolean; sweep: SweepResult; fetches: FetchesResult; finishedAt: Date },
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
  const sweptAll = input.fullSweep && sweep.reachedHorizon && tick.stats.errors === 0;
  await saveIntentStreamState(
    db,
    INTENTS_STREAM,
    {
      ...(sweep.serverPageSize === null ? {} : { pageSize: sweep.serverPageSize }),
      ...(sweptAll ? { lastFullSweepAt: tick.startedAt } : {}),
      ...nextHorizon({ ...sweep, failedFirstSights }),
    },
    input.finishedAt,
  );
}
