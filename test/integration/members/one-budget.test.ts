import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberApis, type MemberApis } from '../../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { createSpendLedger } from '../../../src/api/spend-ledger.js';
import { fixedClock } from '../../../src/clock.js';
import { loadConfig } from '../../../src/config/config.js';
import { runMembersPass } from '../../../src/streams/members.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';
import { createTestRedis } from '../../helpers/redis.js';
import { createIntentHarness, type IntentHarness } from '../intents/harness.js';

// One budget across streams (docs/rate-limit.md): the members pass takes its allowance of the
// limit over MEMBERS_EVERY, computed from what every stream spent (the Redis ledger every process
// writes to). With the feed and the intents idle it gets far more than MEMBER_SYNC_SHARE; with the
// limit consumed by them it keeps its share, no more.

const MIN = 60_000;
// 0.05 rps over 15 minutes: 45 requests per pass; MEMBER_SYNC_SHARE 0.2 keeps members 9 of them.
const LIMIT = 45;
const FLOOR = 9;
let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;
let apis: MemberApis;
const clock = fixedClock(new Date());

beforeAll(async () => {
  h = await createIntentHarness('members-budget');
  const env = { SVC_RATE_LIMIT_RPS: '0.05', MEMBER_SYNC_SHARE: '0.2', MEMBERS_EVERY: '15m' };
  deps = await h.deps({ env, clock });
  // The members' clients pace at the harness's 200 rps (the test does not wait 15 minutes); the
  // pass's budget comes from `deps.config`. Their requests go to the same ledger (same prefix).
  apis = createMemberApis({
    config: loadConfig(h.env),
    redis: deps.redis,
    tokenStore: createTokenStore(h.database.db),
    logger: deps.logger,
    nowMs: () => clock.now().getTime(),
  });
  for (const member of h.sim.control.members.list()) {
    const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId: member.id });
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

describe('members within the one budget', () => {
  it('get no more than their floor (MEMBER_SYNC_SHARE) when the feed and the intents consumed the limit', async () => {
    // Another host's feed and intents: its own Redis connection, the same ledger.
    const otherHost = createTestRedis();
    try {
      const ledger = createSpendLedger({
        redis: otherHost,
        prefix: deps.config.redisPrefix,
        nowMs: () => clock.now().getTime(),
      });
      await ledger.record('checkins', 15);
      await ledger.record('payment_intents', 30);
    } finally {
      otherHost.disconnect();
    }
    const outcome = await runMembersPass(deps, { apis });
    expect(outcome.details).toMatchObject({ budget: FLOOR, floor: FLOOR });
    // The other host's 45, scaled from the ledger's span to the interval (the connections' token
    // refreshes are the members' own spend, not others').
    expect(Number(outcome.details?.['othersSpent'])).toBeGreaterThanOrEqual(LIMIT - 3);
    expect(Number(outcome.details?.['othersSpent'])).toBeLessThanOrEqual(LIMIT);
    expect(outcome.requests).toBeGreaterThan(0);
    expect(outcome.requests).toBeLessThanOrEqual(FLOOR);
    expect(Number(outcome.details?.['skippedForBudget'])).toBeGreaterThan(0);
  });

  it('get more than MEMBER_SYNC_SHARE when the feed and the intents are idle', async () => {
    // The spend above is older than the last 15 minutes now; only the members' own is recent.
    clock.advance(20 * MIN);
    const outcome = await runMembersPass(deps, { apis });
    expect(outcome.details).toMatchObject({ budget: LIMIT, floor: FLOOR, othersSpent: 0 });
    expect(outcome.requests).toBeGreaterThan(FLOOR);
    expect(outcome.requests).toBeLessThanOrEqual(LIMIT);
  });

  it("the ledger counted every request the passes sent against members, the members' token refreshes too", async () => {
    const ledger = createSpendLedger({
      redis: deps.redis,
      prefix: deps.config.redisPrefix,
      nowMs: () => clock.now().getTime(),
    });
    const sent = h.sim.control.requests.list();
    const memberRequests = sent.filter((r) => r.path.startsWith('/v1/users/me')).length;
    // The simulator's request log holds API routes only; each connection was refreshed once at setup.
    const refreshes = h.sim.control.members.list().length;
    const { spent: spend } = await ledger.spentOver(30 * MIN);
    expect(spend.members).toBe(memberRequests + refreshes);
    expect(spend.oauth).toBe(0);
    expect(spend.checkins).toBe(15);
    expect(spend.payment_intents).toBe(30);
  });

  it("pays for a member's token refresh out of the pass's budget once the access token ran out", async () => {
    // The access tokens (60 minutes) issued at the start are past their expiry now.
    clock.advance(90 * MIN);
    const ledger = createSpendLedger({
      redis: deps.redis,
      prefix: deps.config.redisPrefix,
      nowMs: () => clock.now().getTime(),
    });
    const before = h.sim.control.requests.list().length;
    const outcome = await runMembersPass(deps, { apis });
    const memberRequests = h.sim.control.requests
      .list()
      .slice(before)
      .filter((r) => r.path.startsWith('/v1/users/me')).length;
    const refreshes = Number(outcome.details?.['tokenRefreshes']);
    expect(refreshes).toBeGreaterThan(0);
    expect(outcome.requests).toBe(memberRequests + refreshes);
    expect(outcome.requests).toBeLessThanOrEqual(Number(outcome.details?.['budget']));
    // Every member read needed a refresh first, and the ledger saw them all as members' spend.
    expect(refreshes).toBe(Number(outcome.details?.['synced']));
    const { spent } = await ledger.spentOver(MIN);
    expect(spent.members).toBe(memberRequests + refreshes);
  });
});
