import {
  InsufficientScopeError,
  OAuthNotAuthorizedError,
  PartnerApiError,
  RefreshTokenRevokedError,
  UnexpectedResponseShapeError,
} from '../api/errors.js';
import { recordNeedsReauthEvent } from '../warehouse/member-events.js';
import { deliverAlertsSoon } from './alerts.js';
import { driftOf } from '../records/parse.js';
import { driftCounts } from '../records/schema-drift.js';
import { noteSchemaDrift } from './schema-drift.js';
import { createMemberApis, type MemberApis } from '../api/http-partner-api.js';
import type { PartnerApi } from '../api/partner-api.js';
import type { ListResult, ParseResult, Rejection } from '../records/index.js';
import { afterMemberCheckInPage } from '../sync/member-check-in-paging.js';
import {
  MEMBER_KINDS,
  MIN_REQUESTS_PER_KIND,
  planMemberReads,
  withUnreadKinds,
  type MemberKind,
} from '../sync/member-read-plan.js';
import { dueReads, firstIntervalSpread, nextReadInterval, type ReadKind } from '../sync/read-cadence.js';
import { streamAllowance } from './stream-budget.js';
import {
  activeMemberReadStates,
  memberRecordFingerprints,
  recordReads,
  type ReadOutcome,
} from '../warehouse/record-reads.js';
import {
  memberCheckInFacts,
  recordMemberSync,
  replaceMemberTags,
  replaceMemberWallets,
  stalestConnections,
  upsertMemberCheckIns,
  upsertMemberships,
  writeMemberProfile,
  writeMemberStatus,
  type MemberConnection,
  type MemberPiiPolicy,
} from '../warehouse/members.js';
import { storableText } from '../records/storable.js';
import { stripControlCharacters } from '../terminal-text.js';
import { protectRejectedPayload } from '../sync/member-pii.js';
import type { Executor } from '../warehouse/database.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import { stopsThePass } from './pass-stop.js';
import { unfenced } from '../leases/fenced-database.js';
import type { PassOutcome, StreamDeps } from './stream.js';
import { oauthOf } from './registry.js';
import { createTokenStore } from '../warehouse/oauth-tokens.js';

const STREAM = 'members';
/** A member costs at least one request per kind it reads; the budget never drops below a whole member. */
const MEMBER_KINDS_COUNT = MEMBER_KINDS.length;

/** Active connections a pass considers at most. */
const MAX_CONNECTIONS = 1_000_000;
/** Pages of visits one member may take per pass (the first read of a long history resumes next pass). */
const MAX_CHECK_IN_PAGES = 10;
const MEMBERSHIP_PAGE_SIZE = 100;
const MAX_MEMBERSHIP_PAGES = 50;

export interface MembersPassOptions {
  /** Test seam: the member clients (default: built from the config, closed at the end). */
  apis?: MemberApis;
  /**
   * `resync members` (docs/resync.md): every active connection, each member's visits read from the
   * top to the last page, ignoring the incremental stop, the page bound and the pass's budget.
   */
  fromTheTop?: boolean;
}

/**
 * One pass over connected members within their allowance of the one budget over MEMBERS_EVERY
 * (at least MEMBER_SYNC_SHARE of the limit while they have work; more when others leave it unused). Each kind of a member's records (profile, status, wallets, tags, visits,
 * memberships) is read only when due on its adaptive cadence (docs/freshness.md): records past
 * their ceiling first, then the most overdue, then the recently active. Each member is synced with
 * their own tokens: a revoked or spent refresh token marks that connection `needs_reauth` and the
 * pass goes on with the next.
 */
export async function runMembersPass(
  deps: StreamDeps<PartnerApi>,
  options: MembersPassOptions = {},
): Promise<PassOutcome> {
  const { db, config, clock, logger, signal } = deps;
  const log = logger.child({ stream: STREAM });
  const candidates = await stalestConnections(db, MAX_CONNECTIONS);
  const byMember = new Map(candidates.map((connection) => [connection.memberId, connection]));
  const cadenceOf = (kind: ReadKind) => config.freshness.cadences[kind];
  const states = withUnreadKinds([...byMember.keys()], await activeMemberReadStates(db));
  // A re-sync reads every kind of every active member: planned as if everything were due.
  const nowMs = options.fromTheTop === true ? Number.MAX_SAFE_INTEGER : clock.now().getTime();
  const due = dueReads(states, nowMs, cadenceOf);
  const share = options.fromTheTop === true ? undefined : await membersAllowance(deps, due.length);
  const budget = share === undefined ? Number.POSITIVE_INFINITY : share.budget;
  const plan = planMemberReads({ states, nowMs, cadenceOf, budget, due });
  const stateOf = new Map(states.map((state) => [`${state.kind} ${state.recordId}`, state]));
  // Member tokens are stored without the stream's lease: a rotated refresh token must never be lost.
  const apis =
    options.apis ??
    createMemberApis({
      config,
      redis: deps.redis,
      tokenStore: createTokenStore(unfenced(db)),
      logger,
      nowMs: () => clock.now().getTime(),
    });
  const stats = {
    synced: 0,
    profileRejected: 0,
    skippedForBudget: plan.skippedForBudget,
    dueRecords: plan.dueRecords,
    kindsRead: 0,
    kindsChanged: 0,
    needsReauth: 0,
    failed: 0,
    requests: 0,
    rejected: 0,
  };
  /** account_status values the spec does not list, seen this pass (a drift to report, not an error). */
  const unlistedAccountStatuses = new Set<string>();
  let lastError: string | undefined;
  const aborted = () => signal?.aborted === true;
  try {
    for (const planned of plan.reads) {
      if (aborted()) break;
      const connection = byMember.get(planned.memberId);
      if (connection === undefined) continue;
      // The plan counted one request per kind; extra pages of visits spent some of it already.
      if (stats.requests + planned.kinds.length > budget) {
        stats.skippedForBudget++;
        continue;
      }
      const api = apis.forMember(connection.memberId);
      try {
        const before = await memberRecordFingerprints(db, connection.memberId);
        const result = await syncMember(deps, api, connection, planned.kinds, {
          requestsLeft: budget - stats.requests,
          spend: () => stats.requests++,
          fromTheTop: options.fromTheTop === true,
        });
        const after = await memberRecordFingerprints(db, connection.memberId);
        const outcomes = result.kindsRead.map((kind): ReadOutcome => {
          const changed = before[kind] !== after[kind];
          const previous = stateOf.get(`${kind} ${connection.memberId}`)?.intervalMs ?? null;
          // A visit history read only in part (resume page set) has more to read: due at the floor.
          const unfinished = kind === 'member.visits' && result.checkInsResumePage !== null;
          return {
            kind,
            recordId: connection.memberId,
            changed,
            intervalMs: unfinished
              ? cadenceOf(kind).floorMs
              : nextReadInterval(
                  previous,
                  changed,
                  cadenceOf(kind),
                  firstIntervalSpread(`${kind} ${connection.memberId}`),
                ),
          };
        });
        await recordReads(db, outcomes, clock.now());
        stats.kindsRead += outcomes.length;
        stats.kindsChanged += outcomes.filter((outcome) => outcome.changed).length;
        stats.rejected += result.rejected;
        if (result.unlistedAccountStatus !== undefined) {
          unlistedAccountStatuses.add(result.unlistedAccountStatus);
          log.warn(
            { memberId: connection.memberId, accountStatus: result.unlistedAccountStatus },
            "member profile has an account_status the partner API's documentation does not list; stored as given",
          );
        }
        if (result.profileRejected === undefined) {
          await recordMemberSync(db, connection.memberId, {
            ok: true,
            at: clock.now(),
            checkInsResumePage: result.checkInsResumePage,
          });
          stats.synced++;
        } else {
          // Not synced: the profile is in rejected_records, not in `members`. The member's other
          // records were validated on their own and are stored (docs/members.md).
          await recordMemberSync(db, connection.memberId, {
            ok: 'without-profile',
            at: clock.now(),
            checkInsResumePage: result.checkInsResumePage,
            error: `profile rejected (kept in rejected_records): ${result.profileRejected}`,
          });
          stats.profileRejected++;
          log.warn(
            { memberId: connection.memberId },
            'member profile rejected; the member is not synced, their other records are stored',
          );
        }
      } catch (error) {
        if (stopsThePass(error)) throw error;
        if (!(error instanceof PartnerApiError) || aborted()) throw error;
        const reauth = error instanceof RefreshTokenRevokedError || error instanceof OAuthNotAuthorizedError;
        if (reauth) stats.needsReauth++;
        else stats.failed++;
        lastError = error.message;
        const at = clock.now();
        // The connection's new state and its event commit together: one event per lost grant.
        const alertId = await db.transaction().execute(async (trx) => {
          await recordMemberSync(trx, connection.memberId, {
            ok: false,
            at,
            error: reauth ? `${error.message}; run \`rewards-etl members connect\` again` : error.message,
            status: reauth ? 'needs_reauth' : connection.status,
          });
          const raise = reauth && deps.config.alerts.events.has('member.needs_reauth');
          return raise ? recordNeedsReauthEvent(trx, connection, at) : null;
        });
        if (alertId !== null) deliverAlertsSoon(deps, [alertId]);
        log.warn(
          { memberId: connection.memberId, err: error },
          reauth ? 'member connection needs re-authorization' : 'member sync failed',
        );
      }
    }
  } finally {
    if (options.apis === undefined) await apis.close();
  }
  const left = stats.failed + stats.profileRejected;
  const status =
    stats.failed > 0 && stats.synced + stats.profileRejected === 0
      ? 'failed'
      : left > 0
        ? 'partial'
        : 'succeeded';
  // No member id and nothing personal here: sync_runs.details and `run` outlive `members forget`.
  const problems = [
    ...(stats.profileRejected > 0
      ? [
          `${stats.profileRejected} member(s) whose profile was rejected: not synced (the profile is in ` +
            'rejected_records, their other records are stored); `rewards-etl members list` names them',
        ]
      : []),
    ...(stats.failed > 0
      ? [`${stats.failed} member(s) failed to sync; \`rewards-etl members list\` names them`]
      : []),
  ];
  return {
    status,
    rows: stats.synced,
    requests: stats.requests,
    details: {
      ...stats,
      budget,
      ...(share === undefined ? {} : { floor: share.floor, othersSpent: share.othersSpent }),
      connections: candidates.length,
      unchangedShare: stats.kindsRead === 0 ? null : 1 - stats.kindsChanged / stats.kindsRead,
      ...(unlistedAccountStatuses.size === 0
        ? {}
        : { unlistedAccountStatuses: [...unlistedAccountStatuses].join(',') }),
    },
    ...(lastError === undefined ? {} : { error: lastError }),
    ...(problems.length === 0 ? {} : { problems }),
  };
}

/**
 * The pass's budget: the members' allowance of the one budget over MEMBERS_EVERY
 * (docs/rate-limit.md, "One budget"), asking for one request per due record. At least
 * MEMBER_SYNC_SHARE of the limit while members have work (the floor), more when the feed, the
 * intents and the snapshots leave some unused; never less than one whole member.
 */
async function membersAllowance(deps: StreamDeps<PartnerApi>, dueRecords: number) {
  const { allowance, allocation } = await streamAllowance(deps, STREAM, {
    intervalMs: deps.config.schedules.membersMs,
    demand: dueRecords * MIN_REQUESTS_PER_KIND,
  });
  const own = allocation.find((row) => row.stream === STREAM);
  return {
    budget: Math.max(MEMBER_KINDS_COUNT, allowance),
    floor: own?.floor ?? 0,
    othersSpent: allocation.reduce((sum, row) => sum + (row.stream === STREAM ? 0 : row.spent), 0),
  };
}

interface MemberSyncResult {
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
async function syncMember(
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
  if (user !== undefined && user.id !== memberId) {
    // No ids in the text: it lands in sync_runs, which `members forget` does not rewrite.
    throw new UnexpectedResponseShapeError(
      "GET /users/me answered another member than the connection's (the token's sub)",
      {},
    );
  }
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
  // Examples of member drift follow MEMBER_PII (docs/schema-drift.md).
  const member = { member: true };
  if (me !== SKIPPED) await noteSchemaDrift(deps, 'members', driftCounts(driftOf(me)), member);
  if (status !== SKIPPED && status !== null)
    await noteSchemaDrift(deps, 'member_statuses', driftCounts(driftOf(status)), member);
  if (wallets !== SKIPPED && wallets.ok) await noteSchemaDrift(deps, 'member_wallets', wallets.drift, member);
  if (tags !== SKIPPED && tags.ok) await noteSchemaDrift(deps, 'member_tags', tags.drift, member);
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

function piiPolicy(deps: StreamDeps<PartnerApi>): MemberPiiPolicy {
  return { mode: deps.config.members.pii, key: oauthOf(deps.config, 'members').encryptionKey.reveal() };
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
          oldestOnPage: oldestCreatedAt(result.records),
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

function oldestCreatedAt(records: readonly { createdAt: Date }[]): Date | undefined {
  let oldest: Date | undefined;
  for (const record of records)
    if (oldest === undefined || record.createdAt < oldest) oldest = record.createdAt;
  return oldest;
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
