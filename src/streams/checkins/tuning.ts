/**
 * The check-in feed's tuning that is no setting, in one place beside its passes (the settings are
 * CHECKINS_* in the env schema): how many windows run at once, how often a window is retried, and
 * how far each foreground driver goes before it stops. docs/development.md's glossary ("round",
 * "attempt") and docs/check-in-feed.md quote these values.
 */
export const CHECKINS_TUNING = {
  /**
   * Check-in windows one process pages at once: the worker's window queue runs this many jobs per
   * process (jobs/registry.ts), and a foreground `run checkins` or `resync checkins` as many
   * windows: one parses while the other waits on the API.
   */
  windowsInFlight: 2,
  /**
   * Re-pages of a window within one attempt when its `total_count` moved while paging (page
   * numbers shifted; page-attempts.ts); past them the attempt fails.
   */
  repagesPerAttempt: 3,
  /** After a failed attempt a window waits `firstMs` doubling per attempt, at most `maxMs` (retryDelayMs). */
  retry: { firstMs: 30_000, maxMs: 3_600_000 },
  /** Attempts a window gets within one `resync` before the re-sync names it as left behind. */
  resyncAttempts: 3,
  /**
   * Tries for the planner lease, `plannerRetryMs` apart, of a one-shot command (`backfill`,
   * `resync` without `--wait`): a worker's planner holds it for a moment each tick.
   */
  plannerTries: 120,
  plannerRetryMs: 500,
  /**
   * Rounds of due windows (a split adds due windows) a foreground driver takes at most: one
   * `run checkins` pass (pass.ts), `backfill --wait` (page-range.ts), one `resync checkins`
   * (resync.ts).
   */
  maxRounds: { run: 20, backfill: 50, resync: 1_000 },
  /**
   * Pages of a window's first read written in one statement with the last one's checkpoint
   * (src/streams/checkins/page-commit.ts): against one page a statement, 4 cut the write's Postgres
   * CPU by 18 % and 8 by 24 % (bench/write-path-parts.ts, 1.69 → 1.45 → 1.29 of one COPY; wall
   * 1.81 → 1.51 → 1.37). Held pages are never checkpointed: a crash re-fetches them, at most this
   * many less one (3,500 rows at the simulator's page size of 500).
   */
  firstReadPagesPerWrite: 8,
} as const;
