import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberApis, type MemberApis } from '../../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { fixedClock } from '../../../src/clock.js';
import { runMembersPass } from '../../../src/streams/members.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { MEMBER_KINDS } from '../../../src/sync/member-read-plan.js';
import { forgetMember } from '../../../src/warehouse/forget-member.js';
import { readFreshness } from '../../../src/warehouse/record-reads.js';
import { createIntentHarness, type IntentHarness } from '../intents/harness.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';

// The members stream on its adaptive cadence (docs/freshness.md), against the simulator over
// HTTP, with the pipeline's clock moved by hand: each kind of record is read when it is due, a
// change brings the next read closer, a quiet record drifts to its ceiling.

const MIN = 60_000;
const HOUR = 60 * MIN;
let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;
let apis: MemberApis;
let memberIds: string[];
const clock = fixedClock(new Date());

const memberRequests = () =>
  h.sim.control.requests
    .list()
    .filter((r) => r.path.startsWith('/v1/users/me'))
    .map((r) => r.path);

async function readsOf(memberId: string) {
  const rows = await h.database.db
    .selectFrom('rewards.record_reads')
    .selectAll()
    .where('record_id', '=', memberId)
    .execute();
  return new Map(rows.map((row) => [row.kind, row]));
}

beforeAll(async () => {
  h = await createIntentHarness('members-adaptive');
  // Floor 10 min, visits ceiling 2 h (the default), status 24 h, wallets 7 d.
  deps = await h.deps({
    env: { SVC_PAGE_SIZE: '50', MEMBER_SYNC_SHARE: '1', FRESHNESS_FLOOR: '10m' },
    clock,
  });
  apis = createMemberApis({
    config: deps.config,
    redis: deps.redis,
    tokenStore: createTokenStore(h.database.db),
    logger: deps.logger,
  });
  memberIds = h.sim.control.members
    .list()
    .map((m) => m.id)
    .slice(0, 2);
  for (const memberId of memberIds) {
    const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId });
    await storeMemberConnection(createTokenStore(h.database.db), {
      issued: await apis.tokenEndpoint.refresh(refreshToken),
      presentedRefreshToken: refreshToken,
      encryptionKey: deps.config.oauth!.encryptionKey.reveal(),
      now: clock.now(),
    });
  }
});
afterAll(async () => {
  await apis?.close();
  await h?.close();
});

describe('members on an adaptive cadence', () => {
  it('a new member has every kind read at once, each due again after its first interval', async () => {
    const outcome = await runMembersPass(deps);
    expect(outcome.status).toBe('succeeded');
    const reads = await readsOf(memberIds[0]!);
    expect([...reads.keys()].sort()).toEqual([...MEMBER_KINDS].sort());
    for (const row of reads.values()) {
      expect(row.last_read_at).toEqual(clock.now());
      expect(Number(row.reads)).toBe(1);
      // The first read finds everything new.
      expect(row.last_changed_at).toEqual(clock.now());
      expect(row.next_due_at.getTime()).toBeGreaterThan(clock.now().getTime());
    }
  });

  it('nothing is read again before it is due', async () => {
    h.sim.control.requests.clear();
    clock.advance(MIN);
    const outcome = await runMembersPass(deps);
    expect(outcome.requests).toBe(0);
    expect(memberRequests()).toEqual([]);
  });

  it('when visits are due only visits are read; a new visit also reads memberships and halves the interval', async () => {
    const [active, quiet] = memberIds as [string, string];
    const before = await readsOf(active);
    const visitsInterval = before.get('member.visits')!.interval_seconds * 1000;
    const storedVisits = () =>
      h.database.db
        .selectFrom('rewards.member_check_ins')
        .select('id')
        .where('member_id', '=', active)
        .execute();
    const visitsBefore = (await storedVisits()).length;
    h.sim.control.members.addVisit(active);
    h.sim.control.requests.clear();
    clock.advance(visitsInterval);
    const outcome = await runMembersPass(deps);
    expect(outcome.status).toBe('succeeded');
    const paths = memberRequests();
    expect(paths.filter((p) => p === '/v1/users/me/check_ins')).toHaveLength(2); // one per member
    expect(paths.filter((p) => p === '/v1/users/me/memberships')).toHaveLength(1); // the active one only
    expect(paths.filter((p) => p === '/v1/users/me/wallets')).toEqual([]);
    const activeReads = await readsOf(active);
    const quietReads = await readsOf(quiet);
    expect(activeReads.get('member.visits')!.interval_seconds).toBeLessThan(
      quietReads.get('member.visits')!.interval_seconds,
    );
    expect(activeReads.get('member.visits')!.last_changed_at).toEqual(clock.now());
    expect(Number(quietReads.get('member.visits')!.unchanged_reads)).toBe(1);
    expect(await storedVisits()).toHaveLength(visitsBefore + 1);
  });

  it('no record goes unread longer than its ceiling, and status shows the ages per kind', async () => {
    for (let hour = 0; hour < 30; hour++) {
      clock.advance(HOUR);
      await runMembersPass(deps);
      const freshness = await readFreshness(
        h.database.db,
        clock.now(),
        (kind) => deps.config.freshness.cadences[kind].ceilingMs / 1000,
      );
      for (const kind of freshness) expect(kind.pastCeiling, kind.kind).toBe(0);
    }
    const reads = await readsOf(memberIds[1]!);
    // Quiet for a day: the status interval grew from 1.4 h towards its 24 h ceiling; wallets, with
    // a 7 d ceiling, are read far less often than visits (2 h ceiling).
    expect(reads.get('member.status')!.interval_seconds).toBeGreaterThan(6 * 3600);
    expect(Number(reads.get('member.wallets')!.reads)).toBeLessThan(
      Number(reads.get('member.visits')!.reads),
    );
    const freshness = await readFreshness(
      h.database.db,
      clock.now(),
      (kind) => deps.config.freshness.cadences[kind].ceilingMs / 1000,
    );
    const visits = freshness.find((f) => f.kind === 'member.visits')!;
    expect(visits.records).toBe(2);
    expect(visits.sinceReadP95Seconds).toBeLessThanOrEqual(2 * 3600);
    expect(visits.unchangedShare).toBeGreaterThan(0);
  });

  it("forget removes the member's read states", async () => {
    const removed = await forgetMember(h.database.db, memberIds[0]!);
    expect(removed['record_reads']).toBe(MEMBER_KINDS.length);
    expect((await readsOf(memberIds[0]!)).size).toBe(0);
  });
});
