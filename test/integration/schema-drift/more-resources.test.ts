import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMemberApis, type MemberApis } from '../../../src/api/http-partner-api.js';
import { storeMemberConnection } from '../../../src/api/oauth/member-connection.js';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { runBalancePass } from '../../../src/streams/balance.js';
import { runCheckinsPass } from '../../../src/streams/checkins/pass.js';
import { runLocationsPass } from '../../../src/streams/locations.js';
import { runMembersPass } from '../../../src/streams/members.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createTokenStore } from '../../../src/warehouse/oauth-tokens.js';
import { createIntentHarness, type IntentHarness } from '../intents/harness.js';
import { EVERY_PASS } from '../members/every-pass.js';

// Schema drift on the resources issue 31 left open (docs/schema-drift.md), against the simulator's
// schema faults over HTTP: balance, locations (GET /locations/{id} and embedded in check-ins), open
// hours, member check-ins, member tags and memberships. Each records its drift once per (resource,
// field, change); a nested unknown field is named by its dotted path and kept (extra or raw).

let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;
let apis: MemberApis;
type Json = Record<string, unknown>;

const driftOf = async (resource: string) =>
  (
    await h.database.db
      .selectFrom('rewards.schema_drift')
      .select(['field_path', 'change', 'example'])
      .where('resource', '=', resource)
      .execute()
  )
    .map((row) => `${row.field_path}:${row.change}:${JSON.stringify(row.example)}`)
    .sort();
const subjects = async () =>
  (
    await h.database.db
      .selectFrom('rewards.alerts')
      .select('subject')
      .where('type', '=', 'schema.drift')
      .execute()
  )
    .map((row) => row.subject)
    .sort();

beforeAll(async () => {
  h = await createIntentHarness('schema-drift-more');
  deps = await h.deps({
    env: {
      ALERT_WEBHOOK_URL: '',
      ALERT_EVENTS: 'payment_intent.paid,schema.drift',
      CHECKINS_START_AT: new Date(Date.now() - 2 * 86_400_000).toISOString(),
      CHECKINS_WINDOW: '12h',
      MEMBER_PII: 'hash',
      MEMBER_SYNC_SHARE: '1',
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

describe('schema drift on every resource the service reads', () => {
  it('balance: an added field lands in extra (nested ones too); a retyped one is type_changed', async () => {
    h.sim.control.faults.set({
      schemaChanges: [
        { resource: 'balance', change: 'add', field: 'frozen', value: false },
        { resource: 'balance', change: 'add', field: 'balance.decimals', value: 18 },
      ],
    });
    expect((await runBalancePass(deps)).status).toBe('succeeded');
    const row = await h.database.db
      .selectFrom('rewards.balance_snapshots')
      .select('extra')
      .executeTakeFirstOrThrow();
    expect(row.extra).toEqual({ frozen: false, balance: { decimals: 18 } });
    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'balance', change: 'retype', field: 'owner_type', value: 3 }],
    });
    expect((await runBalancePass(deps)).status).toBe('failed');
    expect(await driftOf('balance')).toEqual([
      'balance.decimals:added:18',
      'frozen:added:false',
      'owner_type:type_changed:3',
    ]);
    h.sim.control.faults.reset();
    await runBalancePass(deps);
    const latest = await h.database.db
      .selectFrom('rewards.balance_snapshots')
      .select('extra')
      .orderBy('observed_at', 'desc')
      .executeTakeFirstOrThrow();
    expect(latest.extra).toBeNull();
  });

  it('check-in feed: a field added inside the embedded location is location.foo drift, kept in extra and in the location’s raw', async () => {
    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'check_ins', change: 'add', field: 'location.foo', value: 'bar' }],
    });
    expect((await runCheckinsPass(deps)).status).toBe('succeeded');
    const rows = await h.database.db.selectFrom('rewards.check_ins').select('extra').execute();
    expect(rows.length).toBeGreaterThan(50);
    expect(rows.every((row) => JSON.stringify(row.extra) === '{"location":{"foo":"bar"}}')).toBe(true);
    const locations = await h.database.db.selectFrom('rewards.locations').select('raw').execute();
    expect(locations.length).toBeGreaterThan(0);
    expect(locations.every((l) => (l.raw as Json)['foo'] === 'bar')).toBe(true);
    expect(await driftOf('check_ins')).toEqual(['location.foo:added:"bar"']);
    h.sim.control.faults.reset();
  });

  it('locations and open hours (GET /locations/{id}, /open_hours): added (nested too), missing and retyped fields are recorded; raw and hours keep them', async () => {
    h.sim.control.faults.set({
      schemaChanges: [
        { resource: 'locations', change: 'add', field: 'wheelchair_access', value: true },
        { resource: 'locations', change: 'add', field: 'restaurant.michelin_stars', value: 1 },
        { resource: 'location_open_hours', change: 'add', field: 'open_hours[].note', value: 'n' },
        { resource: 'location_open_hours', change: 'drop', field: 'time_zone' },
      ],
    });
    const outcome = await runLocationsPass(deps, { budget: 3 });
    expect(outcome.details).toMatchObject({ refreshed: 3, rejected: 0, openHours: 3 });
    const refreshed = await h.database.db
      .selectFrom('rewards.locations')
      .select('raw')
      .where('last_refreshed_at', 'is not', null)
      .execute();
    expect(refreshed).toHaveLength(3);
    for (const { raw } of refreshed) {
      expect((raw as Json)['wheelchair_access']).toBe(true);
      // The reduced form's restaurant adds its new key to the feed's richer one.
      expect(((raw as Json)['restaurant'] as Json)['michelin_stars']).toBe(1);
    }
    const hours = await h.database.db.selectFrom('rewards.location_open_hours').select('hours').execute();
    expect(hours).toHaveLength(3);
    expect(hours.every((row) => !Object.hasOwn(row.hours as object, 'time_zone'))).toBe(true);
    expect(await driftOf('locations')).toEqual([
      'restaurant.michelin_stars:added:1',
      'wheelchair_access:added:true',
    ]);
    expect(await driftOf('location_open_hours')).toEqual([
      'open_hours[].note:added:"n"',
      'time_zone:missing:null',
    ]);

    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'locations', change: 'retype', field: 'is_club', value: 'no' }],
    });
    const retyped = await runLocationsPass(deps, { budget: 2 });
    expect(retyped.details).toMatchObject({ rejected: 2 });
    expect(await driftOf('locations')).toContain('is_club:type_changed:"no"');
    h.sim.control.faults.reset();
  });

  it('members: tags and visits keep unknown fields in extra, memberships in raw; examples follow MEMBER_PII', async () => {
    const memberId = h.sim.control.members.list()[0]!.id;
    const refreshToken = h.sim.control.credentials.issueRefreshToken({ memberId });
    await storeMemberConnection(createTokenStore(h.database.db), {
      issued: await apis.tokenEndpoint.refresh(refreshToken),
      presentedRefreshToken: refreshToken,
      encryptionKey: deps.config.oauth!.encryptionKey.reveal(),
      now: new Date(),
    });
    h.sim.control.faults.set({
      schemaChanges: [
        { resource: 'member_tags', change: 'add', field: 'source', value: 'survey' },
        { resource: 'member_check_ins', change: 'add', field: 'location.foo', value: 'bar' },
        { resource: 'member_check_ins', change: 'add', field: 'rating', value: 5 },
        { resource: 'memberships', change: 'add', field: 'membership_tier.rank', value: 2 },
        { resource: 'memberships', change: 'drop', field: 'check_in_count' },
      ],
    });
    await runMembersPass(deps);
    const tags = await h.database.db
      .selectFrom('rewards.member_tags')
      .select('extra')
      .where('member_id', '=', memberId)
      .execute();
    expect(tags.length).toBeGreaterThan(0);
    expect(tags.every((t) => JSON.stringify(t.extra) === '{"source":"survey"}')).toBe(true);
    const visits = await h.database.db
      .selectFrom('rewards.member_check_ins')
      .select('extra')
      .where('member_id', '=', memberId)
      .execute();
    expect(visits.length).toBeGreaterThan(0);
    for (const visit of visits) expect(visit.extra).toEqual({ location: { foo: 'bar' }, rating: 5 });

    const key = deps.config.oauth!.encryptionKey.reveal();
    const hash = (value: unknown) =>
      JSON.stringify(createHmac('sha256', key).update(JSON.stringify(value), 'utf8').digest('hex'));
    expect(await driftOf('member_tags')).toEqual([`source:added:${hash('survey')}`]);
    expect(await driftOf('member_check_ins')).toEqual([
      `location.foo:added:${hash('bar')}`,
      `rating:added:${hash(5)}`,
    ]);
    // A membership without check_in_count is rejected (missing drift); none shows the nested field then.
    expect(await driftOf('memberships')).toEqual(['check_in_count:missing:null']);

    h.sim.control.faults.set({
      schemaChanges: [{ resource: 'memberships', change: 'add', field: 'membership_tier.rank', value: 2 }],
    });
    await runMembersPass(deps);
    const memberships = await h.database.db
      .selectFrom('rewards.memberships')
      .select('raw')
      .where('member_id', '=', memberId)
      .execute();
    expect(memberships.length).toBeGreaterThan(0);
    expect(memberships.every((m) => ((m.raw as Json)['membership_tier'] as Json)['rank'] === 2)).toBe(true);
    expect(await driftOf('memberships')).toEqual([
      'check_in_count:missing:null',
      `membership_tier.rank:added:${hash(2)}`,
    ]);
    h.sim.control.faults.reset();
  });

  it('each new drift raised exactly one schema.drift event, however many passes saw it', async () => {
    expect(await subjects()).toEqual(
      [
        'balance:balance.decimals:added',
        'balance:frozen:added',
        'balance:owner_type:type_changed',
        'check_ins:location.foo:added',
        'locations:restaurant.michelin_stars:added',
        'locations:wheelchair_access:added',
        'locations:is_club:type_changed',
        'location_open_hours:open_hours[].note:added',
        'location_open_hours:time_zone:missing',
        'member_tags:source:added',
        'member_check_ins:location.foo:added',
        'member_check_ins:rating:added',
        'memberships:check_in_count:missing',
        'memberships:membership_tier.rank:added',
      ].sort(),
    );
  });
});
