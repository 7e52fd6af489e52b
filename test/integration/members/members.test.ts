import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { sql } from 'kysely';
import * as memberDataPolicyMigration from '../../../migrations/20261125_0006_member_data_follows_policy.js';
import { createMemberApis, type MemberApis } from '../../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { spendLedgerOf } from '../../../src/streams/stream-budget.js';
import { runMembersPass } from '../../../src/streams/members.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { forgetMember } from '../../../src/warehouse/forget-member.js';
import { listConnections } from '../../../src/warehouse/member-connections.js';
import { createIntentHarness, type IntentHarness } from '../intents/harness.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';
import { EVERY_PASS } from './every-pass.js';

// The members stream against the simulator over HTTP: each member synced with their own tokens.

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;
let apis: MemberApis;
let memberIds: string[];

async function connect(memberId: string): Promise<string> {
  const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId });
  const issued = await apis.tokenEndpoint.refresh(refreshToken);
  return storeMemberConnection(createTokenStore(h.database.db), {
    issued,
    presentedRefreshToken: refreshToken,
    encryptionKey: deps.config.oauth!.encryptionKey.reveal(),
    now: new Date(),
  });
}

const memberCheckInRequests = () =>
  h.sim.control.requests.list().filter((r) => r.path === '/v1/users/me/check_ins').length;
const rows = (
  table: 'member_check_ins' | 'memberships' | 'member_wallets' | 'member_tags',
  memberId: string,
) => h.database.db.selectFrom(`rewards.${table}`).selectAll().where('member_id', '=', memberId).execute();

beforeAll(async () => {
  h = await createIntentHarness('members');
  deps = await h.deps({ env: { SVC_PAGE_SIZE: '5', MEMBER_SYNC_SHARE: '1', ...EVERY_PASS } });
  apis = createMemberApis({
    config: deps.config,
    redis: deps.redis,
    tokenStore: createTokenStore(h.database.db),
    logger: deps.logger,
  });
  memberIds = h.sim.control.members.list().map((m) => m.id);
  for (const id of memberIds.slice(0, 3)) await connect(id);
});
afterAll(async () => {
  await apis?.close();
  await h?.close();
});

describe('members stream', () => {
  it('syncs every connected member: profile, status (none active is a state), wallets, tags, visits, memberships', async () => {
    const outcome = await runMembersPass(deps);
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details).toMatchObject({ synced: 3, needsReauth: 0, skippedForBudget: 0 });
    const [m0, m1] = memberIds as [string, string];
    const profile = await h.database.db
      .selectFrom('rewards.members')
      .selectAll()
      .where('id', '=', m0)
      .executeTakeFirstOrThrow();
    expect(profile.email).toMatch(/@example\.com$/);
    const statuses = await h.database.db.selectFrom('rewards.member_statuses').selectAll().execute();
    const byMember = new Map(statuses.map((s) => [s.member_id, s]));
    expect(byMember.get(m1)).toMatchObject({ has_active_status: false, tier: null });
    expect(byMember.get(m0)).toMatchObject({ has_active_status: true, state: 'active' });
    // year_start/year_end are epoch seconds in the API, timestamps here.
    expect(byMember.get(m0)!.year_start).toBeInstanceOf(Date);
    expect(await rows('member_wallets', m0)).toHaveLength(2);
    expect((await rows('member_tags', m0)).map((t) => t.type)).toEqual(['industry']);
    const visits = await rows('member_check_ins', m0);
    expect(visits.length).toBe(45); // every visit of member 0, over 9 pages of 5
    expect(visits.filter((v) => v.ended_at === null)).toHaveLength(1);
    const memberships = await rows('memberships', m0);
    expect(memberships.length).toBeGreaterThan(0);
    expect(memberships.reduce((sum, m) => sum + m.check_in_count, 0)).toBe(45);
    const history = await h.database.db.selectFrom('rewards.memberships_history').select('id').execute();
    expect(history.length).toBeGreaterThanOrEqual(memberships.length);
  });

  it("member_statuses.progress keeps the API's field names, big-integer amounts as strings", async () => {
    const m0 = memberIds[0]!;
    const row = await h.database.db
      .selectFrom('rewards.member_statuses')
      .select('progress')
      .where('member_id', '=', m0)
      .executeTakeFirstOrThrow();
    const progress = row.progress as Record<string, { value: unknown; currency: string } | number>;
    expect(Object.keys(progress).sort()).toEqual([
      'check_in_threshold',
      'check_ins',
      'spend',
      'spend_threshold',
      'token_deposit',
      'token_deposit_threshold',
    ]);
    expect(typeof (progress['token_deposit'] as { value: unknown }).value).toBe('string');
    expect(typeof (progress['spend'] as { value: unknown }).value).toBe('number');
    // The documented JSON path works.
    const viaPath = await sql<{ deposit: string }>`
      select progress->'token_deposit'->>'value' as deposit from rewards.member_statuses where member_id = ${m0}
    `.execute(h.database.db);
    expect(viaPath.rows[0]?.deposit).toMatch(/^\d+$/);
  });

  it('migration 0006 rewrites progress stored with camelCase names to the API names, values untouched', async () => {
    const m0 = memberIds[0]!;
    const big = '123456789012345678901234567890';
    const camel = {
      checkIns: 3,
      checkInThreshold: 10,
      spend: { value: 1250, currency: 'usd' },
      spendThreshold: { value: 50000, currency: 'usd' },
      tokenDeposit: { value: big, currency: 'svc' },
      tokenDepositThreshold: { value: '1000', currency: 'svc' },
    };
    const before = await h.database.db
      .selectFrom('rewards.member_statuses')
      .select('progress')
      .where('member_id', '=', m0)
      .executeTakeFirstOrThrow();
    await h.database.db
      .updateTable('rewards.member_statuses')
      .set({ progress: JSON.stringify(camel) })
      .where('member_id', '=', m0)
      .execute();
    await h.database.db
      .insertInto('rewards.member_statuses_history')
      .values({
        id: m0,
        valid_from: new Date('2000-01-01T00:00:00Z'),
        valid_to: new Date('2000-01-02T00:00:00Z'),
        content_hash: 'old',
        raw: JSON.stringify({ object: 'status', progress: camel }),
      })
      .execute();
    await memberDataPolicyMigration.up(h.database.db);
    const after = await h.database.db
      .selectFrom('rewards.member_statuses')
      .select('progress')
      .where('member_id', '=', m0)
      .executeTakeFirstOrThrow();
    expect(after.progress).toEqual({
      check_ins: 3,
      check_in_threshold: 10,
      spend: { value: 1250, currency: 'usd' },
      spend_threshold: { value: 50000, currency: 'usd' },
      token_deposit: { value: big, currency: 'svc' },
      token_deposit_threshold: { value: '1000', currency: 'svc' },
    });
    const history = await h.database.db
      .selectFrom('rewards.member_statuses_history')
      .select('raw')
      .where('id', '=', m0)
      .where('content_hash', '=', 'old')
      .executeTakeFirstOrThrow();
    expect((history.raw as { progress: Record<string, unknown> }).progress).toHaveProperty('token_deposit', {
      value: big,
      currency: 'svc',
    });
    await h.database.db
      .deleteFrom('rewards.member_statuses_history')
      .where('id', '=', m0)
      .where('content_hash', '=', 'old')
      .execute();
    await h.database.db
      .updateTable('rewards.member_statuses')
      .set({ progress: JSON.stringify(before.progress) })
      .where('member_id', '=', m0)
      .execute();
  });

  it('incremental: caught up, each member costs one page of visits; a new visit and an ended one are picked up', async () => {
    const before = memberCheckInRequests();
    await runMembersPass(deps);
    expect(memberCheckInRequests() - before).toBe(3);

    const m0 = memberIds[0]!;
    h.sim.control.members.endVisits(m0);
    const newVisit = h.sim.control.members.addVisit(m0, { ongoing: true });
    await runMembersPass(deps);
    const visits = await rows('member_check_ins', m0);
    expect(visits).toHaveLength(46);
    expect(visits.filter((v) => v.ended_at === null).map((v) => v.id)).toEqual([newVisit]);
  });

  it('a tier change opens a new status version; the tier keeps its newline', async () => {
    const m0 = memberIds[0]!;
    h.sim.control.members.setTier(m0, 'Platinum\nCircle');
    await runMembersPass(deps);
    const status = await h.database.db
      .selectFrom('rewards.member_statuses')
      .select('tier')
      .where('member_id', '=', m0)
      .executeTakeFirstOrThrow();
    expect(status.tier).toBe('Platinum\nCircle');
    const versions = await h.database.db
      .selectFrom('rewards.member_statuses_history')
      .select(['valid_to'])
      .where('id', '=', m0)
      .execute();
    expect(versions).toHaveLength(2);
    expect(versions.filter((v) => v.valid_to === null)).toHaveLength(1);
  });

  it("a revoked member's connection needs re-authorization; the other members are still synced", async () => {
    const revoked = memberIds[2]!;
    h.sim.control.credentials.revokeRefreshTokensOf(revoked);
    // Force a refresh: the stored access token is dropped, so the member's next call must refresh.
    await h.database.db
      .updateTable('rewards.oauth_tokens')
      .set({ access_token_encrypted: null, access_token_expires_at: null })
      .where('id', '=', `member:${revoked}`)
      .execute();
    const outcome = await runMembersPass(deps);
    expect(outcome.status).toBe('succeeded');
    expect(outcome.details).toMatchObject({ synced: 2, needsReauth: 1 });
    const connections = await listConnections(h.database.db);
    expect(connections.find((c) => c.memberId === revoked)).toMatchObject({
      status: 'needs_reauth',
      lastError: expect.stringContaining('members connect') as string,
    });
    // A connection that needs re-authorization is not tried again by later passes.
    const again = await runMembersPass(deps);
    expect(again.details).toMatchObject({ synced: 2, needsReauth: 0 });
  });

  it('MEMBER_PII=hash keys the four fields with HMAC (columns and raw); omit leaves them out', async () => {
    const m0 = memberIds[0]!;
    const stored = await h.database.db
      .selectFrom('rewards.members')
      .selectAll()
      .where('id', '=', m0)
      .executeTakeFirstOrThrow();
    const email = stored.email!;
    const hashing = await h.deps({
      env: { SVC_PAGE_SIZE: '5', MEMBER_SYNC_SHARE: '1', ...EVERY_PASS, MEMBER_PII: 'hash' },
    });
    await runMembersPass(hashing);
    const hashed = await h.database.db
      .selectFrom('rewards.members')
      .selectAll()
      .where('id', '=', m0)
      .executeTakeFirstOrThrow();
    const key = hashing.config.oauth!.encryptionKey.reveal();
    expect(hashed.email).toBe(createHmac('sha256', key).update(email).digest('hex'));
    expect(JSON.stringify(hashed.raw)).not.toContain(email);
    const omitting = await h.deps({
      env: { SVC_PAGE_SIZE: '5', MEMBER_SYNC_SHARE: '1', ...EVERY_PASS, MEMBER_PII: 'omit' },
    });
    await runMembersPass(omitting);
    const omitted = await h.database.db
      .selectFrom('rewards.members')
      .selectAll()
      .where('id', '=', m0)
      .executeTakeFirstOrThrow();
    expect(omitted).toMatchObject({ email: null, phone_number: null, birthdate: null, zipcode: null });
    expect(JSON.stringify(omitted.raw)).not.toContain(email);
    expect(h.logs.join('')).not.toContain(email);
  });

  it('the budget bounds a pass: with the limit consumed by the feed, members keep their share; the stalest first, the rest counted as skipped', async () => {
    const extra = h.sim.control.members.add();
    await connect(extra);
    // 10 rps x 0.02 x 60 s = 12 requests: two members' worth (6 each when caught up); 3 are active.
    const tight = await h.deps({
      env: {
        SVC_RATE_LIMIT_RPS: '10',
        MEMBER_SYNC_SHARE: '0.02',
        ...EVERY_PASS,
        MEMBERS_EVERY: '60s',
        SVC_PAGE_SIZE: '5',
      },
    });
    // The feed spent far more than the limit of the last minute (600): members get their floor.
    await spendLedgerOf(tight).record('checkins', 10_000);
    const outcome = await runMembersPass(tight);
    expect(outcome.details, JSON.stringify(outcome.details)).toMatchObject({
      synced: 2,
      skippedForBudget: 1,
    });
    // The new member (never synced) went first.
    const connections = await listConnections(h.database.db);
    expect(connections.find((c) => c.memberId === extra)?.lastSuccessAt).not.toBeNull();
    expect(Number(outcome.requests)).toBeLessThanOrEqual(12);
  });

  it('forget removes the member from every member table, their history, connection and tokens', async () => {
    const m0 = memberIds[0]!;
    const removed = await forgetMember(h.database.db, m0);
    expect(removed['member_check_ins']).toBeGreaterThan(0);
    for (const table of [
      'rewards.member_check_ins',
      'rewards.memberships',
      'rewards.member_wallets',
      'rewards.member_tags',
      'rewards.member_statuses',
    ] as const) {
      expect(
        await h.database.db.selectFrom(table).select('member_id').where('member_id', '=', m0).execute(),
      ).toEqual([]);
    }
    expect(
      await h.database.db.selectFrom('rewards.members').select('id').where('id', '=', m0).execute(),
    ).toEqual([]);
    expect(
      await h.database.db
        .selectFrom('rewards.member_statuses_history')
        .select('id')
        .where('id', '=', m0)
        .execute(),
    ).toEqual([]);
    expect(
      await h.database.db
        .selectFrom('rewards.oauth_tokens')
        .select('id')
        .where('id', '=', `member:${m0}`)
        .execute(),
    ).toEqual([]);
    expect((await listConnections(h.database.db)).map((c) => c.memberId)).not.toContain(m0);
  });

  it('a long history is read over several passes, resuming where the page bound stopped it; nothing missed', async () => {
    const m0 = memberIds[0]!;
    const small = await h.deps({ env: { SVC_PAGE_SIZE: '2', MEMBER_SYNC_SHARE: '1', ...EVERY_PASS } });
    await connect(m0); // forgotten above: a new connection with no history stored
    await runMembersPass(small);
    expect(await rows('member_check_ins', m0)).toHaveLength(20); // 10 pages of 2
    const resumeAt = (await listConnections(h.database.db)).find(
      (c) => c.memberId === m0,
    )?.checkInsResumePage;
    expect(resumeAt).toBe(10);
    for (let pass = 0; pass < 3; pass++) await runMembersPass(small);
    expect(await rows('member_check_ins', m0)).toHaveLength(46);
    expect(
      (await listConnections(h.database.db)).find((c) => c.memberId === m0)?.checkInsResumePage,
    ).toBeNull();
  });
});
