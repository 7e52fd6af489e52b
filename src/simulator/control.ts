import type { QueryStats, SimContext } from './context.js';
import { createCatalogControl, type CatalogControl } from './control-catalog.js';
import type { FaultSettings } from './faults.js';
import { intentFullForm } from './forms.js';
import {
  cancelIntent,
  confirmIntent,
  createIntent,
  expireIntent,
  refundIntent,
  type CreateIntentInput,
} from './intents.js';
import type { LiveMode } from './live-mode.js';
import type { RequestLog, RequestLogEntry } from './request-log.js';
import { addCheckIn, endOngoingVisits } from './world-ops.js';
import { addMember } from './data/generate-members.js';
import type { WorldControl } from './control-world.js';
import { findLocation, findMember, type IntentRecord, type MemberRecord } from './world.js';

export interface PaymentIntentJson {
  id: string;
  object: 'payment_intent';
  payer_account_balance_id: string;
  payee_account_balance_id: string;
  amount: { value: string; currency: string };
  description: string;
  status: 'pending' | 'paid' | 'canceled' | 'refunded';
  expires_at: string | null;
  canceled_at: string | null;
  paid_at: string | null;
  refunded_at: string | null;
  metadata: Record<string, string>;
  created_at: string;
  updated_at: string;
}

/** A correction of a stored visit: its end, or whether the service's pay feature was available. */
export interface CheckInCorrection {
  endedAt?: Date;
  svcPayEnabled?: boolean;
}

export interface MemberInfo {
  id: string;
  spendingWalletId: string;
  membershipWalletId: string;
  spendingBalance: string;
  hasActiveStatus: boolean;
}

/** Everything a test, the demo or the admin HTTP surface can do to the running simulator. */
export interface MemberGrant {
  memberId: string;
  refreshToken: string;
}

export interface SimulatorControl extends CatalogControl {
  clock: {
    now(): Date;
    set(at: Date): void;
    advance(ms: number): void;
    freeze(): void;
    unfreeze(): void;
    /** Simulated milliseconds per real millisecond (1440: a day a minute); the reading stays continuous. */
    setTimeScale(scale: number): void;
    timeScale(): number;
  };
  /** The world's size, its change model, explicit advances of simulated time, and the truth log. */
  world: WorldControl;
  checkIns: {
    count(): number;
    ongoingCount(): number;
    /** New visits at the clock's now (ongoing unless told otherwise); returns their ids. */
    addNow(count: number, options?: { locationId?: string; ongoing?: boolean }): string[];
    /** Late arrivals: visits whose created_at lies in [from, to), spread evenly, ended. */
    addLate(count: number, options: { from: Date; to: Date; locationId?: string }): string[];
    /** Ends every ongoing visit at now; returns how many ended. */
    endOngoing(): number;
    /**
     * The partner corrects a stored check-in in place (created_at, so its window, unchanged): what
     * only a re-read of that window shows (`resync checkins`). Throws RangeError for an unknown id.
     */
    correct(id: string, patch: CheckInCorrection): void;
  };
  members: {
    defaultMemberId: string;
    list(): MemberInfo[];
    /** A new member with wallets, an active status and no visits yet; returns its id. */
    add(): string;
    /** A visit of the member at the clock's now (ongoing unless told otherwise); returns its id. */
    addVisit(memberId: string, options?: { ongoing?: boolean }): string;
    /** Ends the member's ongoing visits at now; returns how many ended. */
    endVisits(memberId: string): number;
    /** The partner corrects one of the member's stored visits in place (`resync members` shows it). */
    correctVisit(memberId: string, visitId: string, patch: CheckInCorrection): void;
    /** Renames the tier of the member's active status (a newline is allowed, as in the real API). */
    setTier(memberId: string, tier: string): void;
    /**
     * A fresh refresh token (every member scope) for each of the given members, or the first `count`,
     * or every member: what `members import` takes, one grant per connected member.
     */
    issueRefreshTokens(options?: { memberIds?: string[]; count?: number }): MemberGrant[];
  };
  app: { merchantId: string; walletId: string; balance(): string };
  intents: {
    create(input?: CreateIntentInput): PaymentIntentJson;
    get(id: string): PaymentIntentJson;
    list(): PaymentIntentJson[];
    pay(id: string): PaymentIntentJson;
    cancel(id: string): PaymentIntentJson;
    refund(id: string): PaymentIntentJson;
    expire(id: string): PaymentIntentJson;
    /**
     * The partner corrects the metadata of an intent in place, `updated_at` unchanged: the list form
     * does not carry it, so only a re-read of the full form shows it (`resync payment_intents`).
     */
    correctMetadata(id: string, metadata: Record<string, string>): PaymentIntentJson;
  };
  credentials: {
    mintApiKey(scopes: string[]): string;
    revokeApiKey(key: string): boolean;
    issueRefreshToken(options?: { memberId?: string; scopes?: string[] }): string;
    revokeRefreshToken(token: string): boolean;
    revokeRefreshTokensOf(memberId: string): number;
    /** A signed access token for tests of bearer routes (expiry follows the simulator clock). */
    accessToken(options?: { memberId?: string; scopes?: string[] }): Promise<string>;
  };
  faults: { get(): FaultSettings; set(patch: Partial<FaultSettings>): FaultSettings; reset(): void };
  requests: { list(): RequestLogEntry[]; clear(): void };
  stats: { lastQuery(): QueryStats | null; checkInStoreBytes(): number };
  live: { tick(): { arrived: number; ended: number } };
}

export function createControl(
  ctx: SimContext,
  log: RequestLog,
  live: LiveMode,
  worldControl: WorldControl,
): SimulatorControl {
  const { world, clock } = ctx;
  return {
    ...createCatalogControl(ctx),
    clock: {
      now: () => clock.now(),
      set: (at) => clock.set(at),
      advance: (ms) => clock.advance(ms),
      freeze: () => clock.freeze(),
      unfreeze: () => clock.unfreeze(),
      setTimeScale: (scale) => clock.setTimeScale(scale),
      timeScale: () => clock.timeScale(),
    },
    world: worldControl,
    checkIns: checkInControl(ctx),
    members: memberControl(ctx),
    app: {
      merchantId: world.app.merchantId,
      walletId: world.app.wallet.id,
      balance: () => world.app.wallet.balance.toString(),
    },
    intents: intentControl(ctx),
    credentials: credentialControl(ctx),
    faults: {
      get: () => ctx.faults.get(),
      set: (patch) => ctx.faults.set(patch),
      reset: () => ctx.faults.reset(),
    },
    requests: { list: () => log.list(), clear: () => log.clear() },
    stats: { lastQuery: () => ctx.stats.last, checkInStoreBytes: () => world.checkIns.byteSize() },
    live: { tick: () => live.tick() },
  };
}

/** The world's first member: who member-scoped helpers act for unless told otherwise. */
function defaultMemberOf(ctx: SimContext): MemberRecord {
  const found = ctx.world.members[0];
  if (!found) throw new Error('the world has no members');
  return found;
}

function checkInControl(ctx: SimContext): SimulatorControl['checkIns'] {
  const { world, clock } = ctx;
  const locationIndexOf = (locationId: string | undefined): (() => number) => {
    if (locationId !== undefined) {
      const l = findLocation(world, locationId);
      if (!l) throw new RangeError(`no location ${locationId}`);
      return () => l.index;
    }
    const live = world.locations.filter((l) => !l.removed);
    let next = 0;
    return () => live[next++ % live.length]?.index ?? 0;
  };
  return {
    count: () => world.checkIns.count,
    ongoingCount: () => world.ongoing.size,
    addNow: (count, options = {}) => {
      const nextLocation = locationIndexOf(options.locationId);
      const now = clock.nowMs();
      return Array.from({ length: count }, () =>
        addCheckIn(world, now, nextLocation(), { ongoing: options.ongoing ?? true }),
      );
    },
    addLate: (count, options) => {
      const nextLocation = locationIndexOf(options.locationId);
      const from = options.from.getTime();
      const span = Math.max(1, options.to.getTime() - from);
      return Array.from({ length: count }, (_, k) =>
        addCheckIn(world, from + Math.floor((span * k) / count), nextLocation(), { ongoing: false }),
      );
    },
    endOngoing: () => endOngoingVisits(world, clock.nowMs(), false),
    correct: (id, patch) => {
      const seq = world.checkInIds.decode(id);
      const row = seq === null ? null : world.checkIns.get(seq);
      if (seq === null || row === null) throw new RangeError(`no check-in ${id}`);
      if (patch.endedAt !== undefined) {
        world.checkIns.setEnded(seq, Math.max(row.createdAtMs, patch.endedAt.getTime()));
        world.ongoing.delete(seq);
      }
      if (patch.svcPayEnabled !== undefined) world.checkIns.setSvcPayEnabled(seq, patch.svcPayEnabled);
    },
  };
}

function memberControl(ctx: SimContext): SimulatorControl['members'] {
  const { world, clock, credentials } = ctx;
  const { truth } = world;
  const member = (id: string): MemberRecord => {
    const found = findMember(world, id.toLowerCase());
    if (!found) throw new RangeError(`no member ${id}`);
    return found;
  };
  return {
    defaultMemberId: defaultMemberOf(ctx).id,
    list: () =>
      world.members.map((m) => ({
        id: m.id,
        spendingWalletId: m.wallets.find((w) => w.type === 'SPENDING')?.id ?? '',
        membershipWalletId: m.wallets.find((w) => w.type === 'MEMBERSHIP')?.id ?? '',
        spendingBalance: (m.wallets.find((w) => w.type === 'SPENDING')?.balance ?? 0n).toString(),
        hasActiveStatus: m.statuses.some((s) => s.state === 'active'),
      })),
    add: () => addMember(world, ctx.runtimeIds, clock.nowMs()),
    addVisit: (memberId, options = {}) => {
      const m = member(memberId);
      const now = clock.nowMs();
      const location = world.locations.find((l) => !l.removed) ?? world.locations[0]!;
      const visit = {
        id: ctx.runtimeIds.uuid(),
        locationIndex: location.index,
        svcPayEnabled: location.paymentsEnabled,
        createdAtMs: now,
        endedAtMs: options.ongoing === false ? now + 1_000 : null,
      };
      m.checkIns.unshift(visit);
      truth.record('member.visits', m.id, now);
      truth.record('member.memberships', m.id, now);
      return visit.id;
    },
    endVisits: (memberId) => {
      const m = member(memberId);
      let ended = 0;
      for (const visit of m.checkIns) {
        if (visit.endedAtMs !== null) continue;
        visit.endedAtMs = Math.max(clock.nowMs(), visit.createdAtMs + 1_000);
        ended++;
      }
      if (ended > 0) truth.record('member.visits', m.id, clock.nowMs());
      return ended;
    },
    correctVisit: (memberId, visitId, patch) => {
      const m = member(memberId);
      const visit = m.checkIns.find((v) => v.id === visitId);
      if (!visit) throw new RangeError(`member ${memberId} has no visit ${visitId}`);
      if (patch.endedAt !== undefined) visit.endedAtMs = Math.max(visit.createdAtMs, patch.endedAt.getTime());
      if (patch.svcPayEnabled !== undefined) visit.svcPayEnabled = patch.svcPayEnabled;
      truth.record('member.visits', m.id, clock.nowMs());
    },
    setTier: (memberId, tier) => {
      const m = member(memberId);
      const active = m.statuses.find((s) => s.state === 'active');
      if (!active) throw new RangeError(`member ${memberId} has no active status`);
      active.tier = tier;
      active.updatedAtMs = clock.nowMs();
      truth.record('member.status', m.id, clock.nowMs());
    },
    issueRefreshTokens: (options = {}) => {
      const chosen =
        options.memberIds?.map((id) => member(id)) ??
        world.members.slice(0, options.count ?? world.members.length);
      return chosen.map((m) => ({
        memberId: m.id,
        refreshToken: credentials.mintRefreshToken(m.id, world.app.clientId, world.app.allowedScopes),
      }));
    },
  };
}

function intentControl(ctx: SimContext): SimulatorControl['intents'] {
  const { world, clock } = ctx;
  const intent = (id: string): IntentRecord => {
    const found = world.intents.get(id);
    if (!found) throw new RangeError(`no payment intent ${id}`);
    return found;
  };
  const view = (i: IntentRecord): PaymentIntentJson =>
    intentFullForm(i, clock.nowMs()) as unknown as PaymentIntentJson;
  return {
    create: (input = {}) => view(createIntent(world, ctx.runtimeIds, clock.nowMs(), input)),
    get: (id) => view(intent(id)),
    list: () => [...world.intents.values()].reverse().map(view),
    pay: (id) => view(confirmIntent(world, intent(id), clock.nowMs())),
    cancel: (id) => view(cancelIntent(world, intent(id), clock.nowMs())),
    refund: (id) => view(refundIntent(world, intent(id), clock.nowMs())),
    expire: (id) => view(expireIntent(world, intent(id), clock.nowMs())),
    correctMetadata: (id, metadata) => {
      const record = intent(id);
      record.metadata = { ...metadata };
      return view(record);
    },
  };
}

function credentialControl(ctx: SimContext): SimulatorControl['credentials'] {
  const { world, credentials } = ctx;
  const defaultMemberId = defaultMemberOf(ctx).id;
  const allMemberScopes = world.app.allowedScopes;
  return {
    mintApiKey: (scopes) => credentials.mintApiKey(scopes),
    revokeApiKey: (key) => credentials.revokeApiKey(key),
    issueRefreshToken: (options = {}) =>
      credentials.mintRefreshToken(
        options.memberId ?? defaultMemberId,
        world.app.clientId,
        options.scopes ?? allMemberScopes,
      ),
    revokeRefreshToken: (token) => credentials.revokeRefreshToken(token),
    revokeRefreshTokensOf: (memberId) => credentials.revokeRefreshTokensOf(memberId),
    accessToken: (options = {}) =>
      credentials.signAccessToken(
        options.memberId ?? defaultMemberId,
        world.app.clientId,
        options.scopes ?? allMemberScopes,
      ),
  };
}
