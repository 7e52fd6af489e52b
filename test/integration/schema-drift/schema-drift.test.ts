import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberApis, type MemberApis } from '../../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { verifyRewardsSignature } from '../../../src/alerts/verify-signature.js';
import { collectStatus } from '../../../src/status/collect-status.js';
import { renderStatusText } from '../../../src/status/render-text.js';
import { runAlertsPass } from '../../../src/alerts/delivery.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { runMembersPass } from '../../../src/streams/members.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import { runRestaurantsPass } from '../../../src/streams/restaurants.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, WEBHOOK_SECRET, type IntentHarness } from '../intents/harness.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';
import { EVERY_PASS } from '../members/every-pass.js';

// Schema drift against the simulator's schema faults (docs/schema-drift.md): per resource kind, an
// added field is kept (extra or raw) and recorded once per (resource, field, change); a dropped
// required field and a retyped one are recorded; each new drift raises one signed schema.drift.

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;
let apis: MemberApis;
const ALL =
  'payment_intent.paid,payment_intent.canceled,payment_intent.refunded,schema.drift,member.needs_reauth';

const driftRows = (resource: string) =>
  h.database.db
    .selectFrom('rewards.schema_drift')
    .selectAll()
    .where('resource', '=', resource)
    .orderBy('field_path')
    .orderBy('change')
    .execute();
const eventsOfType = (type: string) =>
  h.database.db
    .selectFrom('rewards.alerts')
    .selectAll()
    .where('type', '=', type)
    .orderBy('subject')
    .execute();

async function connect(memberId: string): Promise<void> {
  const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId });
  const issued = await apis.tokenEndpoint.refresh(refreshToken);
  await storeMemberConnection(createTokenStore(h.database.db), {
    issued,
    presentedRefreshToken: refreshToken,
    encryptionKey: deps.config.oauth!.encryptionKey.reveal(),
    now: new Date(),
  });
}

beforeAll(async () => {
  h = await createIntentHarness('schema-drift');
  deps = await h.deps({
    env: {
      ALERT_WEBHOOK_URL: '', // recorded here; delivered by the alerts pass the last test drives
      ALERT_EVENTS: ALL,
      CHECKINS_START_AT: new Date(Date.now() - 3 * 86_400_000).toISOString(),
      CHECKINS_WINDOW: '12h',
      MEMBER_PII: 'hash',
      MEMBER_SYNC_SHARE: '1',
      // Every kind of every member read on each pass, as before the adaptive cadence.
      ...EVERY_PASS,
    },
  });
  apis = createMemberApis({
    config: deps.config,
    redis: deps.redis,
    tokenStore: createTokenStore(h.database.db),
    logger: deps.logger,
  });
});
afterAll(async () => {
  h?.sim.control.faults.reset();
  await apis?.close();
  await h?.close();
});

describe('schema drift', () => {
  it('check-ins: an added field lands in extra on every row and is recorded once, however many records and passes', async () => {
    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'check_ins', change: 'add', field: 'mood', value: { score: 4 } }],
    });
    expect((await runCheckinsPass(deps)).status).toBe('succeeded');
    const rows = await h.database.db.selectFrom('rewards.check_ins').select(['id', 'extra']).execute();
    expect(rows.length).toBeGreaterThan(100);
    expect(rows.every((row) => JSON.stringify(row.extra) === '{"mood":{"score":4}}')).toBe(true);
    await runCheckinsPass(deps);
    const drift = await driftRows('check_ins');
    expect(drift).toHaveLength(1);
    expect(drift[0]).toMatchObject({ field_path: 'mood', change: 'added', example: { score: 4 } });
    expect(Number(drift[0]!.count)).toBeGreaterThanOrEqual(rows.length);
    expect((await eventsOfType('schema.drift')).map((e) => e.subject)).toEqual(['check_ins:mood:added']);
  });

  it('check-ins: a record without the field has extra null again; a dropped required field is missing drift, not a null', async () => {
    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'check_ins', change: 'drop', field: 'svc_pay_enabled' }],
    });
    // The look-back re-reads a window only when its count changed or it holds ongoing visits; at
    // some hours of the day none does, so late arrivals make one window's count differ.
    const hour = 3_600_000;
    h.sim.control.checkIns.addLate(3, {
      from: new Date(Date.now() - 6 * hour),
      to: new Date(Date.now() - 5 * hour),
    });
    await runCheckinsPass(deps);
    const drift = await driftRows('check_ins');
    expect(drift.map((d) => `${d.field_path}:${d.change}`)).toEqual([
      'mood:added',
      'svc_pay_enabled:missing',
    ]);
    const missing = drift.find((d) => d.change === 'missing')!;
    expect(missing.example).toBeNull();
    const rejected = await h.database.db
      .selectFrom('rewards.rejected_records')
      .select('reason')
      .where('stream', '=', 'checkins')
      .execute();
    expect(rejected.length).toBeGreaterThan(0);
    expect(rejected.every((r) => r.reason.includes('svc_pay_enabled: required field missing'))).toBe(true);
    h.sim.control.faults.reset();
  });

  it('a snapshot (restaurants): an added field is kept in raw, a retyped one is type_changed with its example', async () => {
    h.sim.control.faults.set({
      schemaChanges: [
        { resource: 'restaurants', change: 'add', field: 'accepts_crypto', value: true },
        { resource: 'restaurants', change: 'retype', field: 'price', value: 'moderate' },
      ],
    });
    await runRestaurantsPass(deps);
    const drift = await driftRows('restaurants');
    expect(drift.map((d) => `${d.field_path}:${d.change}:${JSON.stringify(d.example)}`)).toEqual([
      'price:type_changed:"moderate"',
    ]);
    // Every restaurant was refused (price is required), so nothing showed the added field yet.
    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'restaurants', change: 'add', field: 'accepts_crypto', value: true }],
    });
    await runRestaurantsPass(deps);
    const raw = await h.database.db.selectFrom('rewards.restaurants').select('raw').execute();
    expect(raw.length).toBeGreaterThan(0);
    expect(raw.every((r) => (r.raw as Record<string, unknown>)['accepts_crypto'] === true)).toBe(true);
    expect((await driftRows('restaurants')).map((d) => `${d.field_path}:${d.change}`)).toEqual([
      'accepts_crypto:added',
      'price:type_changed',
    ]);
    h.sim.control.faults.reset();
  });

  it('payment intents: a field added to the full form is kept in extra; one without paid_at is missing drift', async () => {
    await runPaymentIntentsPass(deps); // history first
    const { id } = h.sim.control.intents.create();
    h.sim.control.faults.set({
      schemaChanges: [
        { resource: 'payment_intents.list', change: 'add', field: 'channel', value: 'web' },
        { resource: 'payment_intents', change: 'add', field: 'risk_score', value: 0.2 },
      ],
    });
    await runPaymentIntentsPass(deps);
    const row = await h.database.db
      .selectFrom('rewards.payment_intents')
      .select('extra')
      .where('id', '=', id)
      .executeTakeFirstOrThrow();
    // A new pending intent is read by id in the same pass: the full form's unknown fields are kept.
    expect(row.extra).toEqual({ risk_score: 0.2 });
    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'payment_intents', change: 'drop', field: 'paid_at' }],
    });
    h.sim.control.intents.cancel(id);
    await runPaymentIntentsPass(deps);
    expect((await driftRows('payment_intents')).map((d) => `${d.field_path}:${d.change}`)).toEqual([
      'paid_at:missing',
      'risk_score:added',
    ]);
    expect((await driftRows('payment_intents.list')).map((d) => `${d.field_path}:${d.change}`)).toEqual([
      'channel:added',
    ]);
    // The status still moved (the rest of the full form was salvaged), and was alerted once.
    expect((await eventsOfType('payment_intent.canceled')).map((e) => e.subject)).toEqual([id]);
    h.sim.control.faults.reset();
  });

  it('members: a wallet field added lands in extra; drift examples follow MEMBER_PII (hash here)', async () => {
    const [memberId, lostId] = h.sim.control.members.list().map((m) => m.id) as [string, string];
    await connect(memberId);
    await connect(lostId);
    h.sim.control.faults.set({
      schemaChanges: [
        { resource: 'member_wallets', change: 'add', field: 'label', value: 'Sam’s card' },
        { resource: 'members', change: 'add', field: 'nickname', value: 'Sam' },
      ],
    });
    await runMembersPass(deps);
    const wallets = await h.database.db
      .selectFrom('rewards.member_wallets')
      .select('extra')
      .where('member_id', '=', memberId)
      .execute();
    expect(wallets.length).toBeGreaterThan(0);
    expect(wallets.every((w) => JSON.stringify(w.extra) === JSON.stringify({ label: 'Sam’s card' }))).toBe(
      true,
    );
    const key = deps.config.oauth!.encryptionKey.reveal();
    const hash = (value: unknown) =>
      createHmac('sha256', key).update(JSON.stringify(value), 'utf8').digest('hex');
    const [nickname] = await driftRows('members');
    expect(nickname).toMatchObject({ field_path: 'nickname', change: 'added', example: hash('Sam') });
    const [label] = await driftRows('member_wallets');
    expect(label).toMatchObject({ field_path: 'label', change: 'added', example: hash('Sam’s card') });
    h.sim.control.faults.reset();
  });

  it('members: a lost grant raises one member.needs_reauth; later passes raise no second', async () => {
    const lostId = h.sim.control.members.list()[1]!.id;
    h.sim.control.credentials.revokeRefreshTokensOf(lostId);
    await h.database.db
      .updateTable('rewards.oauth_tokens')
      .set({ access_token_encrypted: null, access_token_expires_at: null })
      .where('id', '=', `member:${lostId}`)
      .execute();
    await runMembersPass(deps);
    await runMembersPass(deps);
    const events = await eventsOfType('member.needs_reauth');
    expect(events).toHaveLength(1);
    expect(events[0]!.subject.startsWith(`${lostId}:`)).toBe(true);
    expect(events[0]!.payload).toMatchObject({ member_id: lostId, status: 'needs_reauth' });
  });

  it('status shows every drift (text and JSON), and each event is POSTed exactly once, signed', async () => {
    const report = await collectStatus({ db: h.database.db, config: deps.config, clock: deps.clock });
    const shown = report.schemaDrift.map((d) => `${d.resource} ${d.fieldPath} ${d.change}`).sort();
    expect(shown).toEqual(
      [
        'check_ins mood added',
        'check_ins svc_pay_enabled missing',
        'members nickname added',
        'member_wallets label added',
        'payment_intents paid_at missing',
        'payment_intents risk_score added',
        'payment_intents.list channel added',
        'restaurants accepts_crypto added',
        'restaurants price type_changed',
      ].sort(),
    );
    expect(renderStatusText(report)).toMatch(/SCHEMA DRIFT[\s\S]*svc_pay_enabled\s+missing/);

    const webhook = await h.deps({ env: { ALERT_EVENTS: ALL } });
    await runAlertsPass(webhook);
    await runAlertsPass(webhook);
    const drifts = await eventsOfType('schema.drift');
    expect(drifts).toHaveLength(9);
    for (const event of drifts) {
      const requests = h.receiver.received.filter((r) => r.headers['rewards-event-id'] === event.id);
      expect(requests).toHaveLength(1);
      const request = requests[0]!;
      expect(
        verifyRewardsSignature({
          rawBody: request.rawBody,
          header: request.headers['rewards-signature'],
          secret: WEBHOOK_SECRET,
        }).ok,
      ).toBe(true);
      const body = JSON.parse(request.rawBody) as {
        type: string;
        data: { schema_drift: { resource: string; field_path: string; change: string } };
      };
      expect(body.type).toBe('schema.drift');
      const { resource, field_path, change } = body.data.schema_drift;
      expect(`${resource}:${field_path}:${change}`).toBe(event.subject);
    }
  });
});
