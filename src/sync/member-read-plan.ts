import {
  MEMBER_KINDS,
  dueReads,
  type Cadence,
  type DueRead,
  type ReadKind,
  type ReadState,
} from './read-cadence.js';

// Which members a members pass reads, and which of their records, within the pass's budget of
// requests (docs/freshness.md). Pure: the stream loads the read states and follows the plan.

/** The member kinds (read-cadence.ts lists them once, in the order a member's reads are made). */
export { MEMBER_KINDS };
export type MemberKind = (typeof MEMBER_KINDS)[number];

export function isMemberKind(kind: ReadKind): kind is MemberKind {
  return (MEMBER_KINDS as readonly ReadKind[]).includes(kind);
}

/** Requests a read of each kind costs at least (a list costs one page; more pages are spent as read). */
export const MIN_REQUESTS_PER_KIND = 1;

export interface MemberRead {
  memberId: string;
  /** The kinds due, in MEMBER_KINDS order. */
  kinds: MemberKind[];
  /** Requests the member's token refresh costs before the reads (0 while the token is usable). */
  refreshCost: number;
}

/**
 * The members to read, most urgent first (a member is as urgent as its most urgent due record),
 * each with the kinds due, as long as their minimum cost (a request per kind, plus the token
 * refresh a member whose access token has run out needs first) fits in `budget` requests. A member
 * whose cost does not fit is skipped, and a cheaper one after it may still fit. Extra pages (a
 * visit history longer than a page) are spent as read: the stream stops taking members when they
 * run out.
 */
export function planMemberReads(input: {
  states: readonly ReadState[];
  nowMs: number;
  cadenceOf: (kind: ReadKind) => Cadence;
  budget: number;
  /** The reads due, when the caller computed them already (to ask the budget for them). */
  due?: readonly DueRead[];
  /** Requests a member's token refresh would cost now (default: none). */
  refreshCostOf?: (memberId: string) => number;
}): { reads: MemberRead[]; skippedForBudget: number; dueRecords: number } {
  const due = (input.due ?? dueReads(input.states, input.nowMs, input.cadenceOf)).filter((read) =>
    isMemberKind(read.kind),
  );
  const byMember = new Map<string, DueRead[]>();
  for (const read of due) {
    const list = byMember.get(read.recordId);
    if (list) list.push(read);
    else byMember.set(read.recordId, [read]);
  }
  // Map iteration follows insertion, so members come in the order of their most urgent read.
  const reads: MemberRead[] = [];
  let left = input.budget;
  let skippedForBudget = 0;
  for (const [memberId, memberDue] of byMember) {
    const refreshCost = input.refreshCostOf?.(memberId) ?? 0;
    const cost = memberDue.length * MIN_REQUESTS_PER_KIND + refreshCost;
    if (cost > left) {
      skippedForBudget++;
      continue;
    }
    left -= cost;
    const kinds = new Set(memberDue.map((read) => read.kind));
    reads.push({ memberId, kinds: MEMBER_KINDS.filter((kind) => kinds.has(kind)), refreshCost });
  }
  return { reads, skippedForBudget, dueRecords: due.length };
}

/** Read states for members with no row yet for some kind: never read, so due at once. */
export function withUnreadKinds(memberIds: readonly string[], known: readonly ReadState[]): ReadState[] {
  const seen = new Set(known.map((state) => `${state.kind} ${state.recordId}`));
  const states = [...known];
  for (const memberId of memberIds)
    for (const kind of MEMBER_KINDS)
      if (!seen.has(`${kind} ${memberId}`))
        states.push({
          kind,
          recordId: memberId,
          lastReadAtMs: null,
          lastChangedAtMs: null,
          intervalMs: null,
        });
  return states;
}
