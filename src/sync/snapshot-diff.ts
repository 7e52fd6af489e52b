/**
 * Snapshot diffing: given what the warehouse held before a pass and what the pass saw, which ids
 * are new, changed, unchanged, back from deletion, and which may be marked deleted.
 *
 * Marking a deletion is the one irreversible-looking decision a snapshot makes, so it is taken
 * only on evidence that the pass saw the whole set: no error, consistent paging, and a count that
 * did not fall suspiciously far below the last complete pass.
 */

export interface PreviousRecord {
  /** Hash of the current history version; null when the record has none (never versioned, or deleted). */
  hash: string | null;
  deleted: boolean;
}

export type DeletionDecision =
  | { kind: 'marked'; ids: string[] }
  | { kind: 'suppressed'; reason: DeletionSuppressedReason; detail: string; candidates: number };

export type DeletionSuppressedReason = 'pass_incomplete' | 'short_pass';

export interface SnapshotPlan {
  inserts: string[];
  changed: string[];
  unchanged: string[];
  /** Previously deleted ids that were seen again (also listed in `changed` or `unchanged`). */
  restored: string[];
  /** Ids seen only as rejected records: counted as seen (never deleted) but not written. */
  rejectedOnly: string[];
  deletions: DeletionDecision;
}

export interface SnapshotPassFacts {
  /** The pass read every page without an error and its paging was consistent. */
  complete: boolean;
  /** Why the pass is not complete (shown to people). */
  incompleteReason?: string;
  /** Records seen by the last complete (succeeded) pass; null when there is none. */
  lastCompleteCount: number | null;
  /**
   * Records seen by the previous pass when that pass was itself complete but judged short. A drop
   * seen twice in a row by complete passes is real, so it is accepted the second time.
   */
  previousShortCount?: number | null;
  /** Fraction in [0, 1]: how far the seen count may fall below the last complete count. */
  maxDrop: number;
}

/** True when `seen` fell more than `maxDrop` below `baseline`. */
export function isSuspiciouslyShort(seen: number, baseline: number | null, maxDrop: number): boolean {
  if (baseline === null || baseline <= 0) return false;
  return seen < baseline * (1 - maxDrop);
}

/**
 * @param previous every record the warehouse knows for this snapshot (deleted ones included)
 * @param seen id -> content hash of what the pass saw; null for an id seen only in a rejected record
 */
export function planSnapshotChanges(
  previous: ReadonlyMap<string, PreviousRecord>,
  seen: ReadonlyMap<string, string | null>,
  facts: SnapshotPassFacts,
): SnapshotPlan {
  const inserts: string[] = [];
  const changed: string[] = [];
  const unchanged: string[] = [];
  const restored: string[] = [];
  const rejectedOnly: string[] = [];
  for (const [id, hash] of seen) {
    const before = previous.get(id);
    if (hash === null) {
      rejectedOnly.push(id);
      continue;
    }
    // A row the warehouse holds without any version (e.g. a short form written from another
    // stream) is new to this snapshot.
    if (before === undefined || (before.hash === null && !before.deleted)) {
      inserts.push(id);
      continue;
    }
    if (before.deleted) restored.push(id);
    if (before.hash === hash) unchanged.push(id);
    else changed.push(id);
  }
  const candidates = [...previous]
    .filter(([id, record]) => !record.deleted && !seen.has(id))
    .map(([id]) => id);
  return {
    inserts,
    changed,
    unchanged,
    restored,
    rejectedOnly,
    deletions: decideDeletions(candidates, seen.size, facts),
  };
}

function decideDeletions(
  candidates: string[],
  seenCount: number,
  facts: SnapshotPassFacts,
): DeletionDecision {
  if (!facts.complete) {
    return {
      kind: 'suppressed',
      reason: 'pass_incomplete',
      detail: facts.incompleteReason ?? 'the pass did not read every page',
      candidates: candidates.length,
    };
  }
  if (isSuspiciouslyShort(seenCount, facts.lastCompleteCount, facts.maxDrop)) {
    const confirmed =
      facts.previousShortCount != null &&
      !isSuspiciouslyShort(seenCount, facts.previousShortCount, facts.maxDrop);
    if (!confirmed) {
      return {
        kind: 'suppressed',
        reason: 'short_pass',
        detail:
          `saw ${seenCount} records, more than ${Math.round(facts.maxDrop * 100)}% below the ` +
          `${facts.lastCompleteCount} of the last complete pass; a second complete pass at this count confirms the drop`,
        candidates: candidates.length,
      };
    }
  }
  return { kind: 'marked', ids: candidates };
}

export interface PagingFacts {
  /** `total_count` of every page read, in order. */
  totalCounts: number[];
  /** Items received over all pages (valid + rejected). */
  itemsReceived: number;
  /** Distinct ids seen (valid + rejected with a readable id). */
  distinctIds: number;
  /** Rejected items without a readable id: one of them could be any record. */
  rejectedWithoutId: number;
}

/**
 * Whether a fully-paged list can be trusted as the whole set. Page numbers shift when records are
 * added or removed mid-pass, so a moving `total_count` or fewer distinct ids than promised means a
 * record may have slipped between pages and must not be taken for a deletion.
 */
export function checkPagingComplete(
  facts: PagingFacts,
): { complete: true } | { complete: false; reason: string } {
  const first = facts.totalCounts[0];
  if (first === undefined) return { complete: false, reason: 'no page was read' };
  if (facts.totalCounts.some((count) => count !== first)) {
    return {
      complete: false,
      reason: `total_count moved during the pass (${facts.totalCounts.join(' -> ')})`,
    };
  }
  if (facts.rejectedWithoutId > 0) {
    return { complete: false, reason: `${facts.rejectedWithoutId} rejected record(s) without a readable id` };
  }
  if (facts.distinctIds < first) {
    return {
      complete: false,
      reason: `saw ${facts.distinctIds} distinct ids of the ${first} promised by total_count`,
    };
  }
  return { complete: true };
}

/** A short, JSON-friendly summary of a plan for PassOutcome.details. */
export function summarizePlan(plan: SnapshotPlan): Record<string, unknown> {
  const deletions =
    plan.deletions.kind === 'marked'
      ? { marked: plan.deletions.ids.length }
      : {
          suppressed: plan.deletions.reason,
          why: plan.deletions.detail,
          wouldHaveMarked: plan.deletions.candidates,
        };
  return {
    new: plan.inserts.length,
    changed: plan.changed.length,
    unchanged: plan.unchanged.length,
    restored: plan.restored.length,
    rejectedOnly: plan.rejectedOnly.length,
    deletions,
  };
}

/** The seen count a finished pass recorded in its details (`seen`), or its row count. */
export function seenCountOfRun(run: { rows: number; details: unknown } | undefined): number | null {
  if (run === undefined) return null;
  const seen = isRecord(run.details) ? run.details['seen'] : undefined;
  return typeof seen === 'number' && Number.isFinite(seen) ? seen : run.rows;
}

/** The seen count of a finished pass when it was complete but its deletions were held back as short. */
export function shortCountOfRun(run: { rows: number; details: unknown } | undefined): number | null {
  if (run === undefined || !isRecord(run.details)) return null;
  const deletions = run.details['deletions'];
  if (!isRecord(deletions) || deletions['suppressed'] !== 'short_pass') return null;
  return seenCountOfRun(run);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
