import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberApis, type MemberApis } from '../../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { runMembersPass } from '../../../src/streams/members.js';
import { runResync } from '../../../src/streams/resync.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, type IntentHarness } from '../intents/harness.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;
let apis: MemberApis;
let memberId: string;

beforeAll(async () => {
  h = await createIntentHarness('members_resync');
  deps = await h.deps({ env: { SVC_PAGE_SIZE: '5', MEMBER_SYNC_SHARE: '1' } });
  apis = createMemberApis({
    config: deps.config,
    redis: deps.redis,
    tokenStore: createTokenStore(h.database.db),
    logger: deps.logger,
  });
  memberId = h.sim.control.members.list()[0]!.id;
  const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId });
  await storeMemberConnection(createTokenStore(h.database.db), {
    issued: await apis.tokenEndpoint.refresh(refreshToken),
    presentedRefreshToken: refreshToken,
    encryptionKey: deps.config.oauth!.encryptionKey.reveal(),
    now: new Date(),
  });
  expect((await runMembersPass(deps)).status).toBe('succeeded');
});
afterAll(async () => {
  await apis?.close();
  await h?.close();
});

const visits = () =>
  h.database.db
    .selectFrom('rewards.member_check_ins')
    .select(['id', 'ended_at', 'created_at'])
    .where('member_id', '=', memberId)
    .orderBy('created_at')
    .execute();
const checkInPagesRead = () =>
  h.sim.control.requests.list().filter((r) => r.path === '/v1/users/me/check_ins').length;

describe('resync members reads every active connection from the top', () => {
  it("a member's old visit corrected: the incremental pass stops before it, the re-sync reads down to it", async () => {
    const stored = await visits();
    expect(stored.length).toBe(45); // 9 pages of 5
    const oldest = stored.find((visit) => visit.ended_at !== null)!;
    const endedAt = new Date(oldest.ended_at!.getTime() + 30 * 60_000);
    h.sim.control.members.correctVisit(memberId, oldest.id, { endedAt });

    h.sim.control.requests.clear();
    expect((await runMembersPass(deps)).status).toBe('succeeded');
    expect(checkInPagesRead()).toBeLessThan(9);
    expect((await visits()).find((visit) => visit.id === oldest.id)?.ended_at).toEqual(oldest.ended_at);

    h.sim.control.requests.clear();
    const result = await runResync(deps, 'members', { range: { from: null, to: null }, wait: false });
    expect(result).toMatchObject({ status: 'succeeded', details: { synced: 1, skippedForBudget: 0 } });
    expect(checkInPagesRead()).toBe(9);
    expect((await visits()).find((visit) => visit.id === oldest.id)?.ended_at).toEqual(endedAt);
  });
});
