import type { Clock } from '../../src/clock.js';
import type { RequestLogEntry } from '../../src/simulator/index.js';
import type { CheckinsDeps } from '../../src/streams/checkins/deps.js';
import { runCheckinsPass } from '../../src/streams/checkins/pass.js';
import { loadCheckinsState } from '../../src/warehouse/checkins-feed-state.js';
import { windowsInRange } from '../../src/warehouse/sync-window-reads.js';
import type { SimulatorProcess } from './simulator-process.js';

// The look-back's cost at a steady feed, in simulated time. After the backfill, the simulator's
// clock and the pipeline's clock move together in steps of CHECKINS_EVERY; at each step the
// simulator's live mode adds the arrivals since the last step (and ends visits whose length
// elapsed), then one runCheckinsPass runs as the schedule would. A request for a window that
// starts before the frontier the pass began with belongs to the look-back (a page_size=1 probe,
// or a re-page of a window whose count moved or that still holds ongoing visits); any other is
// forward paging of new windows.
//
// How many windows the look-back holds decides what it costs (one probe per window per
// CHECKINS_LOOKBACK_EVERY), and that number may still be growing hours after a backfill (each
// pass plans the minute or so closed since the previous one). Simulating a full day of passes
// takes too long for a bench, so besides what was measured we project the steady state: the
// windows inside the look-back at the end, plus their measured growth per hour carried on until
// a whole CHECKINS_LOOKBACK has passed, probed once per cycle, plus the re-page requests per
// hour measured here.

export interface LookbackResult {
  passEveryMs: number;
  warmupMs: number;
  measuredMs: number;
  passes: number;
  arrivals: number;
  probes: number;
  repageRequests: number;
  lookbackRequests: number;
  forwardRequests: number;
  requestsPerHour: number;
  /** Per CHECKINS_LOOKBACK_EVERY period. */
  requestsPerCycle: number;
  /** Of a budget of `budgetRps` requests per second. */
  budgetShare: number;
  budgetRps: number;
  /** Windows inside the look-back when counting started and ended. */
  windowsInLookbackAtStart: number;
  windowsInLookbackAtEnd: number;
  /** Once CHECKINS_LOOKBACK has passed since the backfill (see above). */
  steadyState: {
    windowsInLookback: number;
    requestsPerHour: number;
    requestsPerCycle: number;
    budgetShare: number;
  };
}

export function classifyRequests(
  entries: readonly RequestLogEntry[],
  frontierMs: number | null,
): { probes: number; repages: number; forward: number } {
  let probes = 0;
  let repages = 0;
  let forward = 0;
  for (const entry of entries) {
    if (!entry.path.endsWith('/check_ins')) continue;
    const after = Date.parse(entry.query['created_after'] ?? '');
    const lookback = frontierMs !== null && Number.isFinite(after) && after < frontierMs;
    if (!lookback) forward++;
    else if (entry.query['page_size'] === '1') probes++;
    else repages++;
  }
  return { probes, repages, forward };
}

export async function measureLookback(options: {
  deps: CheckinsDeps;
  clock: Clock & { set(to: Date): void };
  sim: SimulatorProcess;
  startMs: number;
  warmupMs: number;
  measuredMs: number;
  budgetRps: number;
}): Promise<LookbackResult> {
  const { deps, clock, sim } = options;
  const passEveryMs = deps.config.schedules.checkinsMs;
  const cycleMs = deps.config.checkins.lookbackEveryMs;
  await sim.call('freezeClockAt', options.startMs);
  const totals = { passes: 0, arrivals: 0, probes: 0, repages: 0, forward: 0 };
  let windowsAtStart: number | null = null;
  for (let elapsed = passEveryMs; elapsed <= options.warmupMs + options.measuredMs; elapsed += passEveryMs) {
    const now = options.startMs + elapsed;
    await sim.call('setClock', now);
    clock.set(new Date(now));
    const { arrived } = await sim.call('liveTick', null);
    await sim.call('clearRequests', null);
    const frontier = (await loadCheckinsState(deps.db)).frontier?.getTime() ?? null;
    if (elapsed > options.warmupMs && windowsAtStart === null)
      windowsAtStart = await windowsInLookback(deps, now);
    const outcome = await runCheckinsPass(deps, { fullLookback: false }); // the worker's pacing
    if (outcome.status !== 'succeeded')
      throw new Error(`look-back pass ${outcome.status}: ${outcome.error ?? ''}`);
    if (elapsed <= options.warmupMs) continue;
    const counted = classifyRequests(await sim.call('requests', null), frontier);
    totals.passes++;
    totals.arrivals += arrived;
    totals.probes += counted.probes;
    totals.repages += counted.repages;
    totals.forward += counted.forward;
  }
  const lookbackRequests = totals.probes + totals.repages;
  const hours = options.measuredMs / 3_600_000;
  const requestsPerHour = lookbackRequests / hours;
  const endMs = options.startMs + options.warmupMs + options.measuredMs;
  const windowsAtEnd = await windowsInLookback(deps, endMs);
  const growthPerHour = Math.max(0, (windowsAtEnd - (windowsAtStart ?? windowsAtEnd)) / hours);
  const hoursLeft = Math.max(
    0,
    (deps.config.checkins.lookbackMs - options.warmupMs - options.measuredMs) / 3_600_000,
  );
  const steadyWindows = windowsAtEnd + growthPerHour * hoursLeft;
  const steadyPerHour = steadyWindows * (3_600_000 / cycleMs) + totals.repages / hours;
  return {
    passEveryMs,
    warmupMs: options.warmupMs,
    measuredMs: options.measuredMs,
    passes: totals.passes,
    arrivals: totals.arrivals,
    probes: totals.probes,
    repageRequests: totals.repages,
    lookbackRequests,
    forwardRequests: totals.forward,
    requestsPerHour,
    requestsPerCycle: (requestsPerHour * cycleMs) / 3_600_000,
    budgetShare: requestsPerHour / (options.budgetRps * 3600),
    budgetRps: options.budgetRps,
    windowsInLookbackAtStart: windowsAtStart ?? 0,
    windowsInLookbackAtEnd: windowsAtEnd,
    steadyState: {
      windowsInLookback: steadyWindows,
      requestsPerHour: steadyPerHour,
      requestsPerCycle: (steadyPerHour * cycleMs) / 3_600_000,
      budgetShare: steadyPerHour / (options.budgetRps * 3600),
    },
  };
}

async function windowsInLookback(deps: CheckinsDeps, nowMs: number): Promise<number> {
  const since = nowMs - deps.config.checkins.lookbackMs;
  const rows = await windowsInRange(deps.db, {});
  return rows.filter((row) => row.window_end.getTime() > since).length;
}
