import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberApis, type MemberApis } from '../../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import type { MemberPiiMode } from '../../../src/config/config.js';
import { collectStatus } from '../../../src/status/collect-status.js';
import { renderStatusText } from '../../../src/status/render-text.js';
import { runMembersPass } from '../../../src/streams/members.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { forgetMember } from '../../../src/warehouse/forget-member.js';
import { listConnections } from '../../../src/warehouse/member-connections.js';
import { createIntentHarness, type IntentHarness } from '../intents/harness.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';
import { EVERY_PASS } from './every-pass.js';

// Personal data stays where MEMBER_PII says, `forget` forgets everything, and a pass claims only
// what it wrote (issue 26).

let h: IntentHarness;
let apis: MemberApis;
let memberIds: string[];
let base: StreamDeps<PartnerApi>;

/** Values of the hostile profile that must never show outside `store` (and never in a reason). */
const NUMERIC_ZIPCODE = 10014;
const NUMERIC_PHONE = 5551234567;

async function connect(memberId: string): Promise<void> {
  const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId });
  const issued = await apis.tokenEndpoint.refresh(refreshToken);
  await storeMemberConnection(createTokenStore(h.database.db), {
    issued,
    presentedRefreshToken: refreshToken,
    encryptionKey: base.config.oauth!.encryptionKey.reveal(),
    now: new Date(),
  });
}

const depsFor = (mode: MemberPiiMode) =>
  h.deps({ env: { SVC_PAGE_SIZE: '20', MEMBER_SYNC_SHARE: '1', ...EVERY_PASS, MEMBER_PII: mode } });

const hmac = (key: Buffer, value: string) => createHmac('sha256', key).update(value, 'utf8').digest('hex');

const rejectedOf = (memberId: string) =>
  h.database.db
    .selectFrom('rewards.rejected_records')
    .selectAll()
    .where('stream', '=', 'members')
    .execute()
    .then((rows) =>
      rows.filter(
        (row) =>
          row.member_id === memberId ||
          row.record_id === memberId ||
          JSON.stringify(row.payload).includes(memberId),
      ),
    );

beforeAll(async () => {
  h = await createIntentHarness('member_pii');
  base = await depsFor('store');
  apis = createMemberApis({
    config: base.config,
    redis: base.redis,
    tokenStore: createTokenStore(h.database.db),
    logger: base.logger,
  });
  memberIds = h.sim.control.members.list().map((m) => m.id);
});
afterAll(async () => {
  await apis?.close();
  await h?.close();
});

describe('an account_status the spec does not list', () => {
  it('stores the member with the value as given and reports it as drift; the member is synced', async () => {
    const member = memberIds[0]!;
    await connect(member);
    h.sim.control.faults.set({ hostileMembers: { [member]: 'unlisted-account-status' } });
    try {
      const outcome = await runMembersPass(base);
      expect(outcome.status).toBe('succeeded');
      expect(outcome.details).toMatchObject({
        synced: 1,
        profileRejected: 0,
        unlistedAccountStatuses: 'closed',
      });
      const row = await h.database.db
        .selectFrom('rewards.members')
        .select(['account_status', 'email'])
        .where('id', '=', member)
        .executeTakeFirstOrThrow();
      expect(row.account_status).toBe('closed');
      expect(await rejectedOf(member)).toEqual([]);
      expect(h.logs.join('')).toMatch(/account_status the partner API's documentation does not list/);
    } finally {
      h.sim.control.faults.reset();
      await forgetMember(h.database.db, member);
    }
  });
});

describe.each(['store', 'hash', 'omit'] as const)(
  'MEMBER_PII=%s and a profile that fails validation',
  (mode) => {
    let member: string;
    let deps: StreamDeps<PartnerApi>;
    let email: string;

    beforeAll(async () => {
      member = memberIds[{ store: 1, hash: 2, omit: 3 }[mode]]!;
      deps = await depsFor(mode);
      await connect(member);
      // A clean sync first, so the member's email is known to the test.
      await runMembersPass(base);
      email = (
        await h.database.db
          .selectFrom('rewards.members')
          .select('email')
          .where('id', '=', member)
          .executeTakeFirstOrThrow()
      ).email!;
      await h.database.db.deleteFrom('rewards.members').where('id', '=', member).execute();
    });

    it('the pass says the profile was rejected instead of claiming the member synced; the rest of the member is written', async () => {
      h.sim.control.faults.set({ hostileMembers: { [member]: 'numeric-pii' } });
      try {
        const outcome = await runMembersPass(deps);
        expect(outcome.status).toBe('partial');
        expect(outcome.details).toMatchObject({ synced: 0, profileRejected: 1 });
        expect(outcome.problems?.join('\n')).toMatch(/1 member\(s\) whose profile was rejected/);
        expect(
          await h.database.db.selectFrom('rewards.members').select('id').where('id', '=', member).execute(),
        ).toEqual([]);
        // The rule: a member's other records are validated on their own and written.
        const wallets = await h.database.db
          .selectFrom('rewards.member_wallets')
          .select('id')
          .where('member_id', '=', member)
          .execute();
        expect(wallets).toHaveLength(2);
        const connection = (await listConnections(h.database.db)).find((c) => c.memberId === member);
        expect(connection?.lastError).toMatch(/profile rejected/);
      } finally {
        h.sim.control.faults.reset();
      }
    });

    it('the rejected profile and its reason carry personal fields only as MEMBER_PII says', async () => {
      // The profile's rejection (one member of the simulator also has a status the spec refuses).
      const rows = (await rejectedOf(member)).filter((r) => r.record_id === member);
      expect(rows).toHaveLength(1);
      const row = rows[0]!;
      expect(row.member_id).toBe(member);
      // Reasons name the field and the types, never a value, whatever the mode.
      expect(row.reason).toMatch(/zipcode: expected string, got number/);
      expect(row.reason).not.toContain(String(NUMERIC_ZIPCODE));
      expect(row.reason).not.toContain(String(NUMERIC_PHONE));
      const payload = row.payload as Record<string, unknown>;
      const key = deps.config.oauth!.encryptionKey.reveal();
      if (mode === 'store') {
        expect(payload).toMatchObject({ email, zipcode: NUMERIC_ZIPCODE, phone_number: NUMERIC_PHONE });
      } else if (mode === 'hash') {
        // Exactly as in the members table: the same keyed HMAC, so a join on the hash still works.
        expect(payload['email']).toBe(hmac(key, email));
        expect(payload['zipcode']).toBe(hmac(key, String(NUMERIC_ZIPCODE)));
        expect(payload['phone_number']).toBe(hmac(key, String(NUMERIC_PHONE)));
      } else {
        expect(payload).toMatchObject({ email: null, zipcode: null, phone_number: null, birthdate: null });
      }
      if (mode !== 'store') {
        const text = JSON.stringify(row);
        for (const value of [email, String(NUMERIC_ZIPCODE), String(NUMERIC_PHONE)])
          expect(text).not.toContain(value);
        // `status` shows recent rejections: nothing personal there either.
        const report = await collectStatus({ db: h.database.db, config: deps.config, clock: deps.clock });
        const shown = JSON.stringify(report) + renderStatusText(report);
        for (const value of [email, String(NUMERIC_ZIPCODE), String(NUMERIC_PHONE)])
          expect(shown).not.toContain(value);
      }
      // Logs never print these fields.
      for (const value of [email, String(NUMERIC_PHONE)]) expect(h.logs.join('')).not.toContain(value);
    });

    it('forget removes the member everywhere, their rejected records included', async () => {
      // Rows as an earlier version stored them (no member_id): found by record id and by `user`.
      await h.database.db
        .insertInto('rewards.rejected_records')
        .values([
          {
            stream: 'members',
            record_id: member,
            reason: 'account_status: expected …',
            payload: JSON.stringify({ id: member, object: 'user', email }),
            payload_hash: `legacy-profile-${member}`,
          },
          {
            stream: 'members',
            record_id: '00000000-0000-4000-8000-000000000001',
            reason: 'level: too big',
            payload: JSON.stringify({
              id: '00000000-0000-4000-8000-000000000001',
              object: 'status',
              user: member,
            }),
            payload_hash: `legacy-status-${member}`,
          },
        ])
        .execute();
      const stored = (await rejectedOf(member)).length;
      expect(stored).toBeGreaterThanOrEqual(3);
      expect((await rejectedOf(member)).filter((r) => r.member_id === null)).toHaveLength(2);
      const removed = await forgetMember(h.database.db, member);
      expect(removed['rejected_records']).toBe(stored);
      expect(await rejectedOf(member)).toEqual([]);
      for (const table of [
        'rewards.member_wallets',
        'rewards.member_statuses',
        'rewards.member_tags',
        'rewards.member_check_ins',
        'rewards.memberships',
      ] as const) {
        const left = await h.database.db
          .selectFrom(table)
          .select('member_id')
          .where('member_id', '=', member)
          .execute();
        expect(left, table).toEqual([]);
      }
      expect((await listConnections(h.database.db)).map((c) => c.memberId)).not.toContain(member);
    });
  },
);
