import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FRESH_WATCH, watchQueue, type QueueObservation } from '../../../src/worker/idle-watch.js';
import { parseWorkerRecords, splitByFreshness } from '../../../src/worker/worker-records.js';

const TIMEOUT = 60_000;

/** Feeds observations in order; returns the verdict after each. */
function run(observations: QueueObservation[], timeoutMs = TIMEOUT) {
  let watch = FRESH_WATCH;
  return observations.map((observation) => {
    const verdict = watchQueue(watch, observation, timeoutMs);
    watch = verdict.watch;
    return verdict;
  });
}

const at = (seconds: number, fields: Partial<QueueObservation> = {}): QueueObservation => ({
  atMs: seconds * 1000,
  active: 0,
  concurrency: 2,
  readyJobs: 3,
  jobsStarted: 0,
  // A live loop fetches every few seconds; by default each observation has seen one more.
  fetches: seconds,
  ...fields,
});

describe('a queue worker idle while jobs wait', () => {
  it('is stuck once it has had room and ready jobs, starting none, for the idle timeout', () => {
    const verdicts = run([at(0), at(30), at(59), at(60)]);
    expect(verdicts.map((v) => v.stuck)).toEqual([false, false, false, true]);
    expect(verdicts.map((v) => v.idleWithWorkMs)).toEqual([0, 30_000, 59_000, 60_000]);
  });

  it('is not stuck when it started a job meanwhile, has no room, or nothing is ready', () => {
    expect(run([at(0), at(70, { jobsStarted: 1 })]).at(-1)!.stuck).toBe(false);
    expect(run([at(0), at(70, { active: 2 })]).at(-1)!.stuck).toBe(false);
    expect(run([at(0), at(70, { readyJobs: 0 })]).at(-1)!.stuck).toBe(false);
  });

  it('an unreadable queue (Redis down) restarts the clock: a worker gets a full timeout after an outage', () => {
    const verdicts = run([at(0), at(50, { readyJobs: null }), at(100), at(150), at(160)]);
    expect(verdicts.map((v) => v.stuck)).toEqual([false, false, false, false, true]);
  });

  it('a job started restarts the clock at the observation that sees it', () => {
    const started = { jobsStarted: 1 };
    const verdicts = run([at(0), at(50), at(55, started), at(114, started), at(115, started)]);
    expect(verdicts.map((v) => v.stuck)).toEqual([false, false, false, false, true]);
  });
});

describe('a queue worker whose fetch loop went silent', () => {
  const silent = { fetches: 7, readyJobs: 0 };

  it('is stuck once it has had room and neither fetched nor started a job for the idle timeout, jobs ready or not', () => {
    const verdicts = run([at(0, silent), at(30, silent), at(59, silent), at(60, silent)]);
    expect(verdicts.map((v) => v.stuck)).toEqual([false, false, false, true]);
    expect(verdicts.map((v) => v.silentMs)).toEqual([0, 30_000, 59_000, 60_000]);
  });

  it('a fetch, a job started, a full worker or an unreadable queue restarts the clock', () => {
    expect(
      run([
        at(0, silent),
        at(50, silent),
        at(55, { ...silent, fetches: 8 }),
        at(100, { ...silent, fetches: 8 }),
      ]).at(-1)!.stuck,
    ).toBe(false);
    expect(
      run([
        at(0, silent),
        at(50, silent),
        at(55, { ...silent, jobsStarted: 1 }),
        at(100, { ...silent, jobsStarted: 1 }),
      ]).at(-1)!.stuck,
    ).toBe(false);
    expect(run([at(0, silent), at(50, { ...silent, active: 2 }), at(100, silent)]).at(-1)!.stuck).toBe(false);
    expect(run([at(0, silent), at(50, { ...silent, readyJobs: null }), at(100, silent)]).at(-1)!.stuck).toBe(
      false,
    );
  });

  it('stuck exactly when the last observations cover the timeout with room and no progress, or with ready jobs and none started', () => {
    const observation = fc.record({
      gapSeconds: fc.integer({ min: 1, max: 40 }),
      active: fc.integer({ min: 0, max: 3 }),
      readyJobs: fc.option(fc.integer({ min: 0, max: 3 }), { nil: null }),
      started: fc.boolean(),
      fetched: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.array(observation, { minLength: 1, maxLength: 30 }), (steps) => {
        let clock = 0;
        let started = 0;
        let fetches = 0;
        const observations = steps.map((step) => {
          clock += step.gapSeconds;
          if (step.started) started++;
          if (step.fetched) fetches++;
          return at(clock, { active: step.active, readyJobs: step.readyJobs, jobsStarted: started, fetches });
        });
        const verdicts = run(observations);
        // Reference: walk back from the last observation while the condition holds and nothing
        // counted as progress changed between neighbours; stuck when that stretch spans the timeout.
        const room = (o: QueueObservation) => o.readyJobs !== null && o.active < o.concurrency;
        const stretch = (
          holds: (o: QueueObservation) => boolean,
          progress: (o: QueueObservation) => number,
        ) => {
          const last = observations.length - 1;
          if (!holds(observations[last]!)) return 0;
          let first = last;
          while (
            first > 0 &&
            holds(observations[first - 1]!) &&
            progress(observations[first]!) === progress(observations[first - 1]!)
          )
            first--;
          return observations[last]!.atMs - observations[first]!.atMs;
        };
        const silent = stretch(room, (o) => o.jobsStarted + o.fetches);
        const idleWithWork = stretch(
          (o) => room(o) && (o.readyJobs ?? 0) > 0,
          (o) => o.jobsStarted,
        );
        expect(verdicts.at(-1)!.stuck).toBe(silent >= TIMEOUT || idleWithWork >= TIMEOUT);
      }),
      { numRuns: 2_000 },
    );
  });
});

describe('worker records', () => {
  it('a record not refreshed for 30 s belongs to a process that is gone; junk is skipped', () => {
    const record = (id: string, seenAt: string) =>
      JSON.stringify({
        id,
        seenAt,
        queues: [],
        host: 'h',
        pid: 1,
        startedAt: seenAt,
        stuck: false,
        idleTimeoutSeconds: 60,
      });
    const now = Date.parse('2026-11-25T12:00:00Z');
    const records = parseWorkerRecords({
      a: record('a', '2026-11-25T11:59:50.000Z'),
      b: record('b', '2026-11-25T11:59:00.000Z'),
      c: 'not json',
      d: JSON.stringify({ id: 'd' }),
    });
    expect(records.map((r) => r.id)).toEqual(['a', 'b']);
    const { live, gone } = splitByFreshness(records, now);
    expect(live.map((r) => r.id)).toEqual(['a']);
    expect(gone.map((r) => r.id)).toEqual(['b']);
  });
});
