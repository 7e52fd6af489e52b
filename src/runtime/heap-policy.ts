import { getHeapStatistics } from 'node:v8';

/**
 * The V8 heap settings every shipped launcher starts a worker with: the image's NODE_OPTIONS, the
 * systemd unit's, `npm start`'s command line (test/unit/deploy/heap-policy.test.ts keeps them equal
 * to this). Why (issue 39, BENCHMARKS.md "Session 8"): a check-in backfill promotes its records
 * to the old generation at a steady rate, and with V8's defaults the old generation grows to about
 * four times its live ~25 MB before each full collection, so the pass peaked at ~200 MB RSS.
 * - `--max-old-space-size=1024`: below a 2 GiB limit V8 caps its heap-growing factor at 2.0 and
 *   lower with the limit (about 1.6 here), so a full collection comes at ~40 MB instead of ~100.
 *   The live heap is ~25 MB during a backfill; 1 GiB is forty times that.
 * - `--max-semi-space-size=8`: a young generation of 16 MB instead of 32. What a page allocates
 *   dies young or lives through its write either way: the pass's scavenge pauses were 0.61 s with
 *   it and without (145 scavenges against 82), and the cap above cost about 13 % more CPU with it
 *   against about 25 % without (three alternated rounds each, on a noisy machine).
 * Measured on Node 20: peak RSS 195–208 → 131–142 MB at 200,000 check-ins, 141–143 MB at 1,000,000;
 * on Node 22 (the image's) 211–217 → 138–144 MB at 200,000.
 */
export const WORKER_NODE_OPTIONS = '--max-old-space-size=1024 --max-semi-space-size=8';

/** The heap limit this process runs with, in MiB, for the worker's start line. */
export function heapLimitMiB(): number {
  return Math.round(getHeapStatistics().heap_size_limit / 1024 / 1024);
}
