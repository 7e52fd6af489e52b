import { setTimeout as sleep } from 'node:timers/promises';
import type { PartnerApi } from '../../api/partner-api.js';
import { DEFAULT_POLL_SCHEDULE, type PollSchedulePolicy } from '../../sync/intent-poll-schedule.js';
import {
  intentPassStatus,
  lateStartCatchUp,
  nextTickStartMs,
  slotRemainderCap,
  tickBudget,
  tickIntervalMs,
  type TickPacing,
} from '../../sync/intent-tick-plan.js';
import type { PassOutcome, StreamDeps } from '../stream.js';
import { INTENTS_STREAM } from './stream-name.js';
import { addTickStats, emptyTickStats, type IntentPassSettings } from './tick-context.js';
import { runIntentTick, type TickCarry, type TickOutcome } from './tick.js';
import { INTENT_PASS_TUNING, type IntentPassTuning } from './tuning.js';

/** Overrides of INTENT_PASS_TUNING (the worker passes `slotMs`; tests and the bench the rest). */
export interface PaymentIntentsPassOptions extends Partial<IntentPassTuning> {
  schedule?: PollSchedulePolicy;
}

/** The tick pacing of a pass: its slot and tick interval, the pass schedule and the intents' share. */
function tickPacingOf(settings: IntentPassSettings, config: StreamDeps<PartnerApi>['config']): TickPacing {
  return {
    slotMs: settings.slotMs,
    tickEveryMs: settings.tickEveryMs,
    passEveryMs: config.schedules.paymentIntentsMs,
    rateLimitRps: config.api.rateLimitRps,
    pollShare: config.intents.pollShare,
    minRoundTickGapMs: settings.minRoundTickGapMs,
  };
}

/**
 * One pass over payment intents: ticks, each reading the next pages of the list round (newest
 * first, continued across ticks: every open intent is seen once per round) that discovers new
 * intents and raises the paid alert from the list form at once, then by-id reads of the full form
 * within a bounded share: payments first when affordable, other changes, due intents no round
 * reaches, and rows only the list form has written, newest first.
 * With `slotMs` (the worker), it keeps ticking every `tickEveryMs` while intents are open, paced to
 * stay within `config.intents.pollShare` of the shared rate limit; idle, it is one tick. Alerts are
 * delivered as soon as they commit. Cost model: docs/payment-intents.md.
 */
export async function runPaymentIntentsPass(
  deps: StreamDeps<PartnerApi>,
  options: PaymentIntentsPassOptions = {},
): Promise<PassOutcome> {
  const { clock, config, signal } = deps;
  const { schedule, ...tuning } = options;
  const settings: IntentPassSettings = {
    ...INTENT_PASS_TUNING,
    ...stripUndefined(tuning),
    schedule: schedule ?? DEFAULT_POLL_SCHEDULE,
  };
  // The first tick of a pass may read one full form; then `share` of the requests spent.
  const carry: TickCarry = { fullFormCredit: 1 };
  const pacing = tickPacingOf(settings, config);
  const passStartedMs = clock.now().getTime();
  const totals = emptyTickStats();
  const aborted = () => signal?.aborted === true;
  let ticks = 0;
  let last: TickOutcome | undefined;
  let plannedStartMs: number | null = null;
  for (;;) {
    const tickStartedMs = clock.now().getTime();
    const catchUp = lateStartCatchUp(pacing, {
      plannedStartMs,
      startedMs: tickStartedMs,
      budget: last?.budget,
    });
    last = await runIntentTick(deps, settings, {
      shareBudget: tickBudget(pacing),
      intervalMs: tickIntervalMs(pacing),
      carry,
      catchUp,
      cap: slotRemainderCap(pacing, { passStartedMs, tickStartedMs, budget: last?.budget }),
    });
    ticks++;
    addTickStats(totals, last.stats);
    if (settings.slotMs <= 0 || last.open === 0 || aborted()) break;
    const nextTickMs = nextTickStartMs(pacing, {
      passStartedMs,
      tickStartedMs,
      // The catch-up spent time already past: only the rest is paced from this tick's start.
      requests: Math.max(0, last.stats.requests - catchUp),
      budget: last.budget,
      readRound: last.readRound,
    });
    if (nextTickMs === null) break;
    plannedStartMs = nextTickMs;
    const waitMs = nextTickMs - clock.now().getTime();
    if (waitMs > 0) await sleep(waitMs, undefined, { signal }).catch(() => undefined);
    if (aborted()) break;
  }
  deps.metrics.rowsIngested.inc({ stream: INTENTS_STREAM }, totals.firstSights + totals.fetched);
  return {
    status: intentPassStatus(totals),
    rows: totals.firstSights + totals.fetched,
    requests: totals.requests,
    details: { ...totals, ticks, ...last.details },
    ...(last.lastError === undefined ? {} : { error: last.lastError }),
  };
}

function stripUndefined<T extends object>(value: T): { [K in keyof T]-?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]-?: Exclude<T[K], undefined>;
  };
}
