import type { PartnerApi } from '../../api/partner-api.js';
import { nextHorizon } from '../../sync/intent-sweep-plan.js';
import { dueLookupLimit, fullSweepDue } from '../../sync/intent-tick-plan.js';
import { currentAppWalletId } from '../../warehouse/balance.js';
import { loadIntentStreamState, saveIntentStreamState } from '../../warehouse/intent-stream-state.js';
import { countOpenIntents, findDueOpenIntents } from '../../warehouse/payment-intent-polling.js';
import { pollAgainNow } from '../../warehouse/payment-intents.js';
import type { StreamDeps } from '../stream.js';
import { fetchFullForms, type FetchesResult } from './full-form.js';
import { INTENTS_STREAM } from './stream-name.js';
import { sweepIntentList, type SweepResult } from './sweep.js';
import { emptyTickStats, type IntentPassSettings, type Tick, type TickStats } from './tick-context.js';

export interface TickOutcome {
  stats: TickStats;
  /** Open intents after the tick: the pass keeps ticking while there are any. */
  open: number;
  lastError: string | undefined;
  details: Record<string, unknown>;
}

/**
 * One tick: the list sweep, then the by-id fetches within what is left of `budget`, then the stream
 * state (discovery horizon, full sweep time, server page size) for the next tick.
 */
export async function runIntentTick(
  deps: StreamDeps<PartnerApi>,
  settings: IntentPassSettings,
  budget: number,
): Promise<TickOutcome> {
  const { db, clock } = deps;
  const tick = await startTick(deps, settings, budget);
  const fullSweep = fullSweepDue(tick.state.lastFullSweepAt, tick.startedAt, settings.fullSweepEveryMs);
  const due = await findDueOpenIntents(db, { payee: tick.payee, limit: dueLookupLimit(budget) });
  const sweep = await sweepIntentList(tick, { due, fullSweep });
  const fetches = await fetchFullForms(tick, { due, sweep });
  await finishTick(tick, { fullSweep, sweep, fetches, finishedAt: clock.now() });
  const open = await countOpenIntents(db);
  deps.metrics.openIntents.set(open);
  return {
    stats: tick.stats,
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

async function startTick(
  deps: StreamDeps<PartnerApi>,
  settings: IntentPassSettings,
  budget: number,
): Promise<Tick> {
  const { db, clock, logger, signal } = deps;
  const log = logger.child({ stream: INTENTS_STREAM });
  const startedAt = clock.now();
  const tick: Tick = {
    deps,
    settings,
    state: await loadIntentStreamState(db, INTENTS_STREAM, startedAt),
    payee: await currentAppWalletId(db),
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
