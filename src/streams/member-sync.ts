import { InsufficientScopeError, UnexpectedResponseShapeError } from '../api/errors.js';
import { driftOf } from '../records/parse.js';
import { driftCounts } from '../records/schema-drift.js';
import { noteSchemaDrift } from './schema-drift.js';
import type { PartnerApi } from '../api/partner-api.js';
import { oldestCreatedAtMs, type ListResult, type ParseResult, type Rejection } from '../records/index.js';
import { afterMemberCheckInPage } from '../sync/member-check-in-paging.js';
import { MEMBER_KINDS, type MemberKind } from '../sync/member-read-plan.js';
import {
  memberCheckInFacts,
  replaceMemberTags,
  replaceMemberWallets,
  upsertMemberCheckIns,
  upsertMemberships,
  writeMemberProfile,
  writeMemberStatus,
  type MemberPiiPolicy,
} from '../warehouse/members.js';
import type { MemberConnection } from '../warehouse/member-connections.js';
import { storableText } from '../records/storable.js';
import { stripControlCharacters } from '../terminal-text.js';
import { protectRejectedPayload } from '../sync/member-pii.js';
import type { Executor } from '../warehouse/database.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import { oauthSettingsOf, type StreamDeps } from './stream.js';
import { STREAM_NAME } from '../sync/stream-facts.js';

const STREAM = STREAM_NAME.members;
/** Pages of visits one member may take per pass (the first read of a long history resumes next pass). */
const MAX_CHECK_IN_PAGES = 10;
const MEMBERSHIP_PAGE_SIZE = 100;
const MAX_MEMBERSHIP_PAGES = 50;

export interface MemberSyncResult {
  rejected: number;
  /** The kinds read (a route whose scope the member did not grant counts as read: nothing to see). */
  kindsRead: MemberKind[];
  checkInsResumePage: number | null;
  /** Why the profile was rejected (it is in rejected_records); absent when it was stored. */
  profileRejected?: string;
  /** The profile's account_status when the spec does not list it (the member is stored with it). */
  unlistedAccountStatus?: string;
}

/** A value from the API shown in a log line and sync_runs.details: short, one line. */
function shortValue(value: string): string {
  const clean = stripControlCharacters(storableText(value));
  return clean.length > 40 ? `${clean.slice(0, 40)}…` : clean;
}

/**
 * The due kinds of one member: profile, status, wallets and tags in one transaction, then visits
 * and memberships page by page. A route whose scope the member did not grant is skipped, not an
 * error. Memberships are derived from visits (a visit moves check_in_count and
 * last_check_in_date), so a read that finds a new visit reads the memberships too.
 */
export async function syncMember(
  deps: StreamDeps<PartnerApi>,
  api: PartnerApi,
  connection: MemberConnection,
  kinds: readonly MemberKind[],
  budget: { requestsLeft: number; spend: () => void; fromTheTop: boolean },
): Promise<MemberSyncResult> {
  const { db, clock, signal } = deps;
  const memberId = connection.memberId;
  const rejections: Rejection[] = [];
  const call = { signal, priority: 'normal' as const };
  const counted = <T>(request: Promise<T>) => {
    budget.spend();
    return ifScoped(request);
  };
  const due = new Set(kinds);
  const me = due.has('member.profile') ? await counted(api.getMe(call)) : SKIPPED;
  const status = due.has('member.status') ? await counted(api.getMyStatus(call)) : SKIPPED;
  const wallets = due.has('member.wallets') ? await counted(api.getMyWallets(call)) : SKIPPED;
  const tags = due.has('member.tags') ? await counted(api.getMyTags(call)) : SKIPPED;
  const at = clock.now();
  const user = recordOf(me, rejections);
  const profileRejection = me !== SKIPPED && !me.ok ? me.rejection : undefined;
  requireSameMember(user, memberId);
  const statusRecord = status === SKIPPED ? undefined : status === null ? null : recordOf(status, rejections);
  const walletList = listOf(wallets, '/users/me/wallets', rejections);
  const tagList = listOf(tags, '/users/me/tags', rejections);
  const pii = piiPolicy(deps);
  await db.transaction().execute(async (trx) => {
    if (user !== undefined) await writeMemberProfile(trx, user, pii, at);
    if (statusRecord !== undefined) await writeMemberStatus(trx, memberId, statusRecord, at);
    if (walletList !== undefined) await replaceMemberWallets(trx, memberId, walletList, at);
    if (tagList !== undefined) await replaceMemberTags(trx, memberId, tagList, at);
    await storeMemberRejections(trx, memberId, rejections, pii, at);
  });
  await noteProfileDrift(deps, { me, status, wallets, tags });
  const checkIns = due.has('member.visits')
    ? await syncMemberCheckIns(deps, api, connection, {
        pages: Math.max(1, budget.requestsLeft - kinds.length + 1),
        spend: budget.spend,
        fromTheTop: budget.fromTheTop,
      })
    : { rejected: 0, resumePage: connection.checkInsResumePage, newVisits: false };
  if (checkIns.newVisits) due.add('member.memberships');
  const membershipRejected = due.has('member.memberships')
    ? await syncMemberships(deps, api, memberId, budget.spend)
    : 0;
  return {
    rejected: rejections.length + checkIns.rejected + membershipRejected,
    kindsRead: MEMBER_KINDS.filter((kind) => due.has(kind)),
    checkInsResumePage: checkIns.resumePage,
    ...(profileRejection === undefined ? {} : { profileRejected: profileRejection.reason }),
    ...(user === undefined || user.accountStatusListed
      ? {}
      : { unlistedAccountStatus: shortValue(user.accountStatus) }),
  };
}

function requireSameMember(user: { id: string } | undefined, memberId: string): void {
  if (user === undefined || user.id === memberId) return;
  // No ids in the text: it lands in sync_runs, which `members forget` does not rewrite.
  throw new UnexpectedResponseShapeError(
    "GET /users/me answered another member than the connection's (the token's sub)",
    {},
  );
}

/** Drift of the profile-side reads; examples of member drift follow MEMBER_PII (docs/schema-drift.md). */
async function noteProfileDrift(
  deps: StreamDeps<PartnerApi>,
  reads: {
    me: Awaited<ReturnType<PartnerApi['getMe']>> | typeof SKIPPED;
    status: Awaited<ReturnType<PartnerApi['getMyStatus']>> | typeof SKIPPED;
    wallets: Awaited<ReturnType<PartnerApi['getMyWallets']>> | typeof SKIPPED;
    tags: Awaited<ReturnType<PartnerApi['getMyTags']>> | typeof SKIPPED;
  },
): Promise<void> {
  const { me, status, wallets, tags } = reads;
  const member = { member: true };
  if (me !== SKIPPED) await noteSchemaDrift(deps, 'members', driftCounts(driftOf(me)), member);
  if (status !== SKIPPED && status !== null)
    await noteSchemaDrift(deps, 'member_statuses', driftCounts(driftOf(status)), member);
  if (wallets !== SKIPPED && wallets.ok) await noteSchemaDrift(deps, 'member_wallets', wallets.drift, member);
  if (tags !== SKIPPED && tags.ok) await noteSchemaDrift(deps, 'member_tags', tags.drift, member);
}

function piiPolicy(deps: StreamDeps<PartnerApi>): MemberPiiPolicy {
  return { mode: deps.config.members.pii, key: oauthSettingsOf(deps.config, STREAM).encryptionKey.reveal() };
}

/**
 * A member's rejected records: attributed to the member (what `members forget` deletes by; a visit
 * or a membership does not name its member) and with personal fields as MEMBER_PII says, exactly
 * as in `members` (src/sync/member-pii.ts).
 */
async function storeMemberRejections(
  db: Executor,
  memberId: string,
  rejections: readonly Rejection[],
  pii: MemberPiiPolicy,
  at: Date,
): Promise<void> {
  await storeRejections(
    db,
    STREAM,
    rejections.map((rejection) => ({
      ...rejection,
      memberId,
      payload: protectRejectedPayload(rejection.payload, pii.mode, pii.key),
    })),
    at,
  );
}

/**
 * The member's visits, incrementally (afterMemberCheckInPage): from the top until caught up. The
 * first read of a long history stops at the page bound and resumes from that page next pass (new
 * visits push old ones to later pages, so resuming at a page number may re-read, never skip).
 */
async function syncMemberCheckIns(
  deps: StreamDeps<PartnerApi>,
  api: PartnerApi,
  connection: MemberConnection,
  budget: { pages: number; spend: () => void; fromTheTop: boolean },
): Promise<{ rejected: number; resumePage: number | null; newVisits: boolean }> {
  const { db, clock, signal } = deps;
  const memberId = connection.memberId;
  const facts = await memberCheckInFacts(db, memberId);
  let newVisits = false;
  let pagesLeft = budget.fromTheTop ? Number.POSITIVE_INFINITY : Math.min(MAX_CHECK_IN_PAGES, budget.pages);
  let rejected = 0;
  /** Reads from `startPage`; how the read ended, and the page to resume from when the bound cut it. */
  const readFrom = async (startPage: number, stopWhenCaughtUp: boolean) => {
    try {
      for await (const result of api.myCheckInPages({ startPage, signal })) {
        budget.spend();
        pagesLeft--;
        const at = clock.now();
        await db.transaction().execute(async (trx) => {
          await upsertMemberCheckIns(trx, memberId, result.records, at);
          await storeMemberRejections(trx, memberId, result.rejections, piiPolicy(deps), at);
        });
        await noteSchemaDrift(deps, 'member_check_ins', result.drift, { member: true });
        rejected += result.rejections.length;
        if (result.records.some((record) => !facts.known.has(record.id))) newVisits = true;
        const decision = afterMemberCheckInPage({
          ids: [...result.records.map((r) => r.id), ...result.rejections.map((r) => r.recordId ?? '')],
          known: facts.known,
          oldestOnPageMs: oldestCreatedAtMs(result.records),
          oldestOngoingStored: facts.oldestOngoing,
          lastPage: result.pagination.nextPage === null,
        });
        const next = result.pagination.nextPage;
        if (next === null) return { ended: 'end' as const, resume: null };
        if (stopWhenCaughtUp && decision === 'done') return { ended: 'caught-up' as const, resume: null };
        if (pagesLeft <= 0) return { ended: 'bound' as const, resume: next };
      }
      return { ended: 'end' as const, resume: null };
    } catch (error) {
      if (error instanceof InsufficientScopeError) return { ended: 'no-scope' as const, resume: null };
      throw error;
    }
  };
  let resume = connection.checkInsResumePage;
  const head = await readFrom(0, !budget.fromTheTop && facts.known.size > 0);
  if (head.ended === 'no-scope') return { rejected, resumePage: resume, newVisits };
  // Read to the last page: nothing is left to resume.
  if (budget.fromTheTop) return { rejected, resumePage: head.resume, newVisits };
  if (facts.known.size === 0) resume = head.resume;
  else if (head.ended === 'bound') resume = Math.min(resume ?? Number.POSITIVE_INFINITY, head.resume);
  else if (resume !== null && pagesLeft > 0) resume = (await readFrom(resume, false)).resume;
  return { rejected, resumePage: resume, newVisits };
}

/** All the member's memberships, paged to the end with a sane page size (the API does not cap it). */
async function syncMemberships(
  deps: StreamDeps<PartnerApi>,
  api: PartnerApi,
  memberId: string,
  spend: () => void,
): Promise<number> {
  const { db, clock, signal } = deps;
  let rejected = 0;
  let pages = 0;
  try {
    for await (const page of api.myMembershipPages({ pageSize: MEMBERSHIP_PAGE_SIZE, signal })) {
      spend();
      const at = clock.now();
      await db.transaction().execute(async (trx) => {
        await upsertMemberships(trx, memberId, page.records, at);
        await storeMemberRejections(trx, memberId, page.rejections, piiPolicy(deps), at);
      });
      await noteSchemaDrift(deps, 'memberships', page.drift, { member: true });
      rejected += page.rejections.length;
      if (++pages >= MAX_MEMBERSHIP_PAGES) break;
    }
  } catch (error) {
    if (!(error instanceof InsufficientScopeError)) throw error;
  }
  return rejected;
}

const SKIPPED = Symbol('scope not granted');

/** A route whose scope the member did not grant answers 403: that part is skipped. */
async function ifScoped<T>(call: Promise<T>): Promise<T | typeof SKIPPED> {
  try {
    return await call;
  } catch (error) {
    if (error instanceof InsufficientScopeError) return SKIPPED;
    throw error;
  }
}

function recordOf<T>(result: ParseResult<T> | typeof SKIPPED, rejections: Rejection[]): T | undefined {
  if (result === SKIPPED) return undefined;
  if (result.ok) return result.record;
  rejections.push(result.rejection);
  return undefined;
}

function listOf<T>(
  result: ListResult<T> | typeof SKIPPED,
  path: string,
  rejections: Rejection[],
): T[] | undefined {
  if (result === SKIPPED) return undefined;
  if (!result.ok) throw new UnexpectedResponseShapeError(`${path}: ${result.reason}`, {});
  rejections.push(...result.rejections);
  return result.records;
}
