import { OAuthNotAuthorizedError, PartnerApiError, RefreshTokenRevokedError } from '../api/errors.js';
import { recordNeedsReauthEvent } from '../alerts/raise-needs-reauth.js';
import { deliverAlertsSoon } from '../alerts/delivery.js';
import { createMemberApis, type MemberApis } from '../api/http-partner-api.js';
import type { PartnerApi } from '../api/partner-api.js';
import {
  MEMBER_KINDS,
  MIN_REQUESTS_PER_KIND,
  planMemberReads,
  withUnreadKinds,
  type MemberKind,
} from '../sync/member-read-plan.js';
import { dueReads, learnedRead, type ReadKind } from '../sync/read-cadence.js';
import { streamAllowance } from './stream-budget.js';
import {
  activeMemberReadStates,
  memberRecordFingerprints,
  recordReads,
  type ReadOutcome,
} from '../warehouse/record-reads.js';
import {
  recordMemberSync,
  stalestConnections,
  type MemberConnection,
} from '../warehouse/member-connections.js';
import { stopsThePass } from './pass-stop.js';
import { unfenced } from '../leases/fenced-database.js';
import type { PassOutcome, StreamDeps } from './stream.js';
import { STREAM_NAME } from '../sync/stream-facts.js';
import { syncMember, type MemberSyncResult } from './member-sync.js';
import { createTokenStore, memberAccessTokenExpiries } from '../warehouse/oauth-tokens.js';
import { memberTokenRow } from '../api/oauth/member-connection.js';
import { refreshCost } from '../sync/member-token-refresh.js';

const STREAM = STREAM_NAME.members;
/** A member costs at least one request per kind it reads; the budget never drops below a whole member. */
const MEMBER_KINDS_COUNT = MEMBER_KINDS.length;

/** Active connections a pass considers at most. */
const MAX_CONNECTIONS = 1_000_000;

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
 * One pass over connected members within their allowance of the one budget over MEMBERS_EVERY (at
 * least MEMBER_SYNC_SHARE of the limit while they have work; more when others leave it unused).
 * Each kind of a member's records (profile, status, wallets, tags, visits, memberships) is read
 * only when due on its adaptive cadence (docs/freshness.md): records past their ceiling first, then
 * the most overdue, then the recently active. Each member is synced with their own tokens: a revoked
 * or spent refresh token marks that connection `needs_reauth` and the pass goes on with the next.
 */
export async function runMembersPass(
  deps: StreamDeps<PartnerApi>,
  options: MembersPassOptions = {},
): Promise<PassOutcome> {
  const pass = await planPass(deps, options);
  // Member tokens are stored without the stream's lease: a rotated refresh token must never be lost.
  const apis =
    options.apis ??
    createMemberApis({
      config: deps.config,
      redis: deps.redis,
      tokenStore: createTokenStore(unfenced(deps.db)),
      logger: deps.logger,
      nowMs: () => deps.clock.now().getTime(),
    });
  const run: PassRun = {
    deps,
    pass,
    apis,
    fromTheTop: options.fromTheTop === true,
    log: deps.logger.child({ stream: STREAM }),
    stats: {
      ...emptyStats(),
      skippedForBudget: pass.plan.skippedForBudget,
      dueRecords: pass.plan.dueRecords,
    },
    unlistedAccountStatuses: new Set(),
    lastError: undefined,
  };
  try {
    for (const planned of pass.plan.reads) {
      if (deps.signal?.aborted === true) break;
      await readPlannedMember(run, planned);
    }
  } finally {
    if (options.apis === undefined) await apis.close();
  }
  return passOutcome(run);
}

type PassStats = ReturnType<typeof emptyStats>;

function emptyStats() {
  return {
    synced: 0,
    profileRejected: 0,
    skippedForBudget: 0,
    dueRecords: 0,
    kindsRead: 0,
    kindsChanged: 0,
    needsReauth: 0,
    failed: 0,
    /** Every request of the pass, the members' token refreshes included. */
    requests: 0,
    tokenRefreshes: 0,
    rejected: 0,
  };
}

type PassPlan = Awaited<ReturnType<typeof planPass>>;

interface PassRun {
  deps: StreamDeps<PartnerApi>;
  pass: PassPlan;
  apis: MemberApis;
  fromTheTop: boolean;
  log: StreamDeps<PartnerApi>['logger'];
  stats: PassStats;
  /** account_status values the spec does not list, seen this pass (a drift to report, not an error). */
  unlistedAccountStatuses: Set<string>;
  lastError: string | undefined;
}

/** The connections, their read states, the pass's budget and which members to read for which kinds. */
async function planPass(deps: StreamDeps<PartnerApi>, options: MembersPassOptions) {
  const { db, config, clock } = deps;
  const candidates = await stalestConnections(db, MAX_CONNECTIONS);
  const byMember = new Map(candidates.map((connection) => [connection.memberId, connection]));
  const cadenceOf = (kind: ReadKind) => config.freshness.cadences[kind];
  const states = withUnreadKinds([...byMember.keys()], await activeMemberReadStates(db));
  // A re-sync reads every kind of every active member: planned as if everything were due.
  const nowMs = options.fromTheTop === true ? Number.MAX_SAFE_INTEGER : clock.now().getTime();
  const due = dueReads(states, nowMs, cadenceOf, config.schedules.membersMs);
  const refreshCostOf = await tokenRefreshCosts(deps);
  // A visits read that finds a new visit reads the memberships too, and a member whose access token
  // ran out needs a refresh first: ask for those requests as well.
  const dueMembers = new Set(due.map((read) => read.recordId));
  const demand =
    due.length +
    due.filter((read) => read.kind === 'member.visits').length +
    [...dueMembers].reduce((sum, memberId) => sum + refreshCostOf(memberId), 0);
  const share = options.fromTheTop === true ? undefined : await membersAllowance(deps, demand);
  const budget = share === undefined ? Number.POSITIVE_INFINITY : share.budget;
  const plan = planMemberReads({ states, nowMs, cadenceOf, budget, due, refreshCostOf });
  const stateOf = new Map(states.map((state) => [`${state.kind} ${state.recordId}`, state]));
  return { connections: candidates.length, byMember, cadenceOf, share, budget, plan, stateOf };
}

/** What each member's token refresh would cost now, counted against the members' budget. */
async function tokenRefreshCosts(deps: StreamDeps<PartnerApi>): Promise<(memberId: string) => number> {
  const expiries = await memberAccessTokenExpiries(deps.db);
  const nowMs = deps.clock.now().getTime();
  return (memberId) => refreshCost(expiries.get(memberTokenRow(memberId))?.getTime() ?? null, nowMs);
}

/** One planned member: synced within what is left of the budget, or skipped when it no longer fits. */
async function readPlannedMember(run: PassRun, planned: PassPlan['plan']['reads'][number]): Promise<void> {
  const { deps, pass, stats } = run;
  const connection = pass.byMember.get(planned.memberId);
  if (connection === undefined) return;
  // The plan counted one request per kind (and the refresh); extra pages of visits spent some already.
  if (stats.requests + planned.kinds.length + planned.refreshCost > pass.budget) {
    stats.skippedForBudget++;
    return;
  }
  const countRefresh = () => {
    stats.requests++;
    stats.tokenRefreshes++;
  };
  try {
    const before = await memberRecordFingerprints(deps.db, connection.memberId);
    const result = await syncMember(
      deps,
      run.apis.forMember(connection.memberId, { onRefreshed: countRefresh }),
      connection,
      planned.kinds,
      {
        requestsLeft: pass.budget - stats.requests - planned.refreshCost,
        spend: () => stats.requests++,
        fromTheTop: run.fromTheTop,
      },
    );
    const after = await memberRecordFingerprints(deps.db, connection.memberId);
    await recordLearnedReads(run, connection.memberId, result, (kind) => before[kind] !== after[kind]);
    await recordSynced(run, connection.memberId, result);
  } catch (error) {
    if (stopsThePass(error)) throw error;
    if (!(error instanceof PartnerApiError) || deps.signal?.aborted === true) throw error;
    await recordMemberFailure(run, connection, error);
  }
}

/** What each kind's read teaches the cadence. */
async function recordLearnedReads(
  run: PassRun,
  memberId: string,
  result: MemberSyncResult,
  changed: (kind: MemberKind) => boolean,
): Promise<void> {
  const { pass, stats } = run;
  const outcomes = result.kindsRead.map((kind): ReadOutcome => {
    const learned = learnedRead({
      kind,
      recordId: memberId,
      previousIntervalMs: pass.stateOf.get(`${kind} ${memberId}`)?.intervalMs ?? null,
      changed: changed(kind),
      cadence: pass.cadenceOf(kind),
    });
    // A visit history read only in part (resume page set) has more to read: due at the floor.
    const unfinished = kind === 'member.visits' && result.checkInsResumePage !== null;
    return unfinished ? { ...learned, intervalMs: pass.cadenceOf(kind).floorMs } : learned;
  });
  await recordReads(run.deps.db, outcomes, run.deps.clock.now());
  stats.kindsRead += outcomes.length;
  stats.kindsChanged += outcomes.filter((outcome) => outcome.changed).length;
  stats.rejected += result.rejected;
}

async function recordSynced(run: PassRun, memberId: string, result: MemberSyncResult): Promise<void> {
  const { deps, stats, log } = run;
  if (result.unlistedAccountStatus !== undefined) {
    run.unlistedAccountStatuses.add(result.unlistedAccountStatus);
    log.warn(
      { memberId, accountStatus: result.unlistedAccountStatus },
      "member profile has an account_status the partner API's documentation does not list; stored as given",
    );
  }
  if (result.profileRejected === undefined) {
    await recordMemberSync(deps.db, memberId, {
      ok: true,
      at: deps.clock.now(),
      checkInsResumePage: result.checkInsResumePage,
    });
    stats.synced++;
    return;
  }
  // Not synced: the profile is in rejected_records, not in `members`. The member's other records
  // were validated on their own and are stored (docs/members.md).
  await recordMemberSync(deps.db, memberId, {
    ok: 'without-profile',
    at: deps.clock.now(),
    checkInsResumePage: result.checkInsResumePage,
    error: `profile rejected (kept in rejected_records): ${result.profileRejected}`,
  });
  stats.profileRejected++;
  log.warn({ memberId }, 'member profile rejected; the member is not synced, their other records are stored');
}

/** A failed member: a lost grant marks the connection `needs_reauth` (and raises its event). */
async function recordMemberFailure(
  run: PassRun,
  connection: MemberConnection,
  error: PartnerApiError,
): Promise<void> {
  const { deps, stats } = run;
  const reauth = error instanceof RefreshTokenRevokedError || error instanceof OAuthNotAuthorizedError;
  if (reauth) stats.needsReauth++;
  else stats.failed++;
  run.lastError = error.message;
  const at = deps.clock.now();
  // The connection's new state and its event commit together: one event per lost grant.
  const alertId = await deps.db.transaction().execute(async (trx) => {
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
  run.log.warn(
    { memberId: connection.memberId, err: error },
    reauth ? 'member connection needs re-authorization' : 'member sync failed',
  );
}

function passOutcome(run: PassRun): PassOutcome {
  const { stats, pass } = run;
  const left = stats.failed + stats.profileRejected;
  const status =
    stats.failed > 0 && stats.synced + stats.profileRejected === 0
      ? 'failed'
      : left > 0
        ? 'partial'
        : 'succeeded';
  const problems = passProblems(stats);
  return {
    status,
    rows: stats.synced,
    requests: stats.requests,
    details: {
      ...stats,
      budget: pass.budget,
      ...(pass.share === undefined ? {} : { floor: pass.share.floor, othersSpent: pass.share.othersSpent }),
      connections: pass.connections,
      unchangedShare: stats.kindsRead === 0 ? null : 1 - stats.kindsChanged / stats.kindsRead,
      ...(run.unlistedAccountStatuses.size === 0
        ? {}
        : { unlistedAccountStatuses: [...run.unlistedAccountStatuses].join(',') }),
    },
    ...(run.lastError === undefined ? {} : { error: run.lastError }),
    ...(problems.length === 0 ? {} : { problems }),
  };
}

/** No member id and nothing personal here: sync_runs.details and `run` outlive `members forget`. */
function passProblems(stats: PassStats): string[] {
  return [
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
}

/**
 * The pass's budget: the members' allowance of the one budget over MEMBERS_EVERY
 * (docs/rate-limit.md, "One budget"), asking for one request per due record and one per possible follow-up read of memberships. At least
 * MEMBER_SYNC_SHARE of the limit while members have work (the floor), more when the feed, the
 * intents and the snapshots leave some unused; never less than one whole member.
 */
async function membersAllowance(deps: StreamDeps<PartnerApi>, requests: number) {
  const { allowance, allocation } = await streamAllowance(deps, STREAM, {
    intervalMs: deps.config.schedules.membersMs,
    demand: requests * MIN_REQUESTS_PER_KIND,
  });
  const own = allocation.find((row) => row.stream === STREAM);
  return {
    budget: Math.max(MEMBER_KINDS_COUNT, allowance),
    floor: own?.floor ?? 0,
    othersSpent: allocation.reduce((sum, row) => sum + (row.stream === STREAM ? 0 : row.spent), 0),
  };
}
