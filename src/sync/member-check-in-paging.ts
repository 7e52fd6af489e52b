/**
 * When to stop reading a member's visits. `/users/me/check_ins` pages newest first with no date
 * filter, so an incremental read pages from the top and stops at the first page that (a) holds only
 * visits already stored and (b) reaches back to the oldest visit stored as ongoing, whose end only
 * a re-read shows. A page count bound keeps one member from taking the pass; the first read of a
 * long history resumes where it stopped next time. Pure.
 */
export interface MemberPageFacts {
  /** Ids on the page just read. */
  ids: readonly string[];
  /** Ids stored before this pass. */
  known: ReadonlySet<string>;
  /** Oldest created_at on the page, epoch milliseconds (undefined for an empty page). */
  oldestOnPageMs: number | undefined;
  /** Oldest stored visit still ongoing (ended_at null), if any. */
  oldestOngoingStored: Date | null;
  /** The API says there is no next page. */
  lastPage: boolean;
}

export type MemberPagingDecision = 'next' | 'done';

export function afterMemberCheckInPage(facts: MemberPageFacts): MemberPagingDecision {
  if (facts.lastPage || facts.ids.length === 0) return 'done';
  const allKnown = facts.ids.every((id) => facts.known.has(id));
  if (!allKnown) return 'next';
  const ongoingBelow =
    facts.oldestOngoingStored !== null &&
    facts.oldestOnPageMs !== undefined &&
    facts.oldestOnPageMs > facts.oldestOngoingStored.getTime();
  return ongoingBelow ? 'next' : 'done';
}
