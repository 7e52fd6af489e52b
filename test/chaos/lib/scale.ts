// CHAOS_SCALE=ci (default) keeps the whole suite within a few minutes on two cores;
// CHAOS_SCALE=full uses the sizes of issue 9. Every scenario runs at both; only sizes change.
export type ChaosScale = 'ci' | 'full';

export interface ChaosSizes {
  scale: ChaosScale;
  /** Check-ins the simulator generates for the kill-9 backfill. */
  killCheckIns: number;
  /** At least this many SIGKILLs during the kill-9 run. */
  minKills: number;
  /** Payment intents created and paid during the kill-9 run. */
  intents: number;
  /** Check-ins for the restart scenario. */
  restartCheckIns: number;
  /** Check-ins for the in-process API-fault passes. */
  faultCheckIns: number;
  /** Shared partner-API rate limit the worker processes use (requests per second). */
  workerRps: number;
  /** Upper bound for one scenario to settle, in ms (a bound for a hung test, not a timed assertion). */
  settleMs: number;
}

export function chaosSizes(env: Record<string, string | undefined> = process.env): ChaosSizes {
  const scale = env.CHAOS_SCALE === 'full' ? 'full' : 'ci';
  return scale === 'full'
    ? {
        scale,
        killCheckIns: 100_000,
        minKills: 20,
        intents: 40,
        restartCheckIns: 50_000,
        faultCheckIns: 20_000,
        workerRps: 25,
        settleMs: 900_000,
      }
    : {
        scale,
        killCheckIns: 20_000,
        minKills: 5,
        intents: 8,
        restartCheckIns: 8_000,
        faultCheckIns: 3_000,
        workerRps: 12,
        settleMs: 240_000,
      };
}
