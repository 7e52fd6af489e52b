/**
 * SCD type 2 versioning, as plain data. A history table holds one row per distinct version of a
 * record: `[valid_from, valid_to)`, with `valid_to` null on the current one. A record observed
 * with the same content hash as its current version gets no new row; a different hash closes the
 * current version and opens a new one at the same instant, so versions never overlap or leave a gap.
 * A deleted record has no current version: its last one was closed when the deletion was marked.
 */

/** The latest version of a record: current when `validTo` is null, closed when it was deleted. */
export interface LatestVersion {
  hash: string;
  validFrom: Date;
  validTo: Date | null;
}

export interface VersionCandidate<Raw = unknown> {
  id: string;
  hash: string;
  raw: Raw;
}

export interface VersionPlan<Raw = unknown> {
  /** Current versions to close: `valid_to` becomes `at`. */
  close: { id: string; validTo: Date }[];
  /** Versions to open (current from now on). */
  open: { id: string; validFrom: Date; hash: string; raw: Raw }[];
  unchanged: string[];
}

/**
 * Plans the history writes for a batch observed at `at`. Candidates are de-duplicated by id (the
 * last one wins: a later page shows a later state). When `at` is not after the latest version's
 * start (two observations in the same millisecond, a clock step back), the new version starts one
 * millisecond after it, and a record back from deletion starts no earlier than its last version
 * ended: `(id, valid_from)` stays unique and intervals never overlap.
 */
export function planVersions<Raw>(
  latest: ReadonlyMap<string, LatestVersion>,
  candidates: readonly VersionCandidate<Raw>[],
  at: Date,
): VersionPlan<Raw> {
  const byId = new Map<string, VersionCandidate<Raw>>();
  for (const candidate of candidates) byId.set(candidate.id, candidate);
  const plan: VersionPlan<Raw> = { close: [], open: [], unchanged: [] };
  for (const candidate of byId.values()) {
    const version = latest.get(candidate.id);
    const isCurrent = version !== undefined && version.validTo === null;
    if (isCurrent && version.hash === candidate.hash) {
      plan.unchanged.push(candidate.id);
      continue;
    }
    const start = version === undefined ? at : laterOf(at, earliestNextStart(version));
    if (isCurrent) plan.close.push({ id: candidate.id, validTo: start });
    plan.open.push({ id: candidate.id, validFrom: start, hash: candidate.hash, raw: candidate.raw });
  }
  return plan;
}

/** Closing the current versions of deleted records: the same clamping rule as `planVersions`. */
export function planClosures(
  latest: ReadonlyMap<string, LatestVersion>,
  ids: readonly string[],
  at: Date,
): VersionPlan<never>['close'] {
  const close: VersionPlan<never>['close'] = [];
  for (const id of new Set(ids)) {
    const version = latest.get(id);
    if (version === undefined || version.validTo !== null) continue;
    close.push({ id, validTo: laterOf(at, earliestNextStart(version)) });
  }
  return close;
}

function earliestNextStart(version: LatestVersion): Date {
  return version.validTo ?? new Date(version.validFrom.getTime() + 1);
}

function laterOf(a: Date, b: Date): Date {
  return a.getTime() >= b.getTime() ? a : b;
}

/** A version row as a history table holds it (used by tests and by in-memory replays). */
export interface VersionRow<Raw = unknown> {
  id: string;
  validFrom: Date;
  validTo: Date | null;
  hash: string;
  raw: Raw;
}

/** Applies a plan to an in-memory history (the same semantics as the warehouse writer). */
export function applyVersionPlan<Raw>(
  rows: readonly VersionRow<Raw>[],
  plan: Pick<VersionPlan<Raw>, 'close' | 'open'>,
): VersionRow<Raw>[] {
  const closeAt = new Map(plan.close.map((c) => [c.id, c.validTo]));
  const next = rows.map((row) => {
    const validTo = closeAt.get(row.id);
    return row.validTo === null && validTo !== undefined ? { ...row, validTo } : row;
  });
  for (const open of plan.open) {
    next.push({ id: open.id, validFrom: open.validFrom, validTo: null, hash: open.hash, raw: open.raw });
  }
  return next;
}

/** The latest version of each id in an in-memory history. */
export function latestVersionsOf(rows: readonly VersionRow[]): Map<string, LatestVersion> {
  const latest = new Map<string, LatestVersion>();
  for (const row of rows) {
    const seen = latest.get(row.id);
    if (seen === undefined || row.validFrom.getTime() > seen.validFrom.getTime()) {
      latest.set(row.id, { hash: row.hash, validFrom: row.validFrom, validTo: row.validTo });
    }
  }
  return latest;
}
