import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningSimulator } from '../../src/simulator/index.js';
import { applySchemaChanges, parseSchemaChanges } from '../../src/simulator/schema-faults.js';
import { call, startFixedSimulator } from './sim-fixture.js';

// The schema faults (docs/simulator.md, "Control surface", `schemaChanges`): a resource's records
// gain, lose or retype a field.

describe('schema faults', () => {
  let sim: RunningSimulator;
  const admin = (body: unknown, method = 'POST') =>
    call(sim, sim.baseUrl.replace(/\/v1$/, '/_admin/faults'), {
      method,
      headers: { authorization: `Bearer ${sim.credentials.adminToken}` },
      ...(method === 'POST' ? { body } : {}),
    });
  const feed = () => call(sim, '/check_ins?page_size=5', { apiKey: sim.credentials.apiKey });

  beforeAll(async () => {
    sim = await startFixedSimulator();
  });
  afterAll(() => sim.close());

  it('add, drop and retype apply to every record of the resource, set through the admin route', async () => {
    const set = await admin({
      schemaChanges: [
        { resource: 'check_ins', change: 'add', field: 'mood', value: { score: 4 } },
        { resource: 'check_ins', change: 'drop', field: 'ended_at' },
        { resource: 'check_ins', change: 'retype', field: 'svc_pay_enabled', value: 'yes' },
      ],
    });
    expect(set.status).toBe(200);
    const page = await feed();
    const items = page.json.check_ins as Record<string, unknown>[];
    expect(items.length).toBe(5);
    for (const item of items) {
      expect(item['mood']).toEqual({ score: 4 });
      expect(Object.hasOwn(item, 'ended_at')).toBe(false);
      expect(item['svc_pay_enabled']).toBe('yes');
    }
  });

  it('other resources are untouched, and a reset restores the shape', async () => {
    const restaurants = await call(sim, '/restaurants?page_size=2', { apiKey: sim.credentials.apiKey });
    expect(Object.hasOwn(restaurants.json.restaurants[0] as object, 'mood')).toBe(false);
    await admin(undefined, 'DELETE');
    const items = (await feed()).json.check_ins as Record<string, unknown>[];
    expect(
      items.every((item) => !Object.hasOwn(item, 'mood') && typeof item['svc_pay_enabled'] === 'boolean'),
    ).toBe(true);
  });

  it.each([
    [{ schemaChanges: [{ resource: 'orders', change: 'add', field: 'x' }] }, /resource must be one of/],
    [{ schemaChanges: [{ resource: 'check_ins', change: 'rename', field: 'x' }] }, /change must be one of/],
    [
      { schemaChanges: [{ resource: 'check_ins', change: 'add', field: '' }] },
      /field must be a non-empty string/,
    ],
    [{ schemaChanges: {} }, /must be an array/],
  ])('refuses a malformed change %j', async (body, message) => {
    const answer = await admin(body);
    expect(answer.status).toBe(400);
    expect(answer.text).toMatch(message);
  });

  it('single-record and list answers of the mapped routes, and only those', () => {
    const change = [
      { resource: 'payment_intents' as const, change: 'add' as const, field: 'risk', value: 1 },
    ];
    expect(JSON.parse(applySchemaChanges('/payment_intents/abc', '{"id":"abc"}', change))).toEqual({
      id: 'abc',
      risk: 1,
    });
    expect(applySchemaChanges('/payment_intents', '{"payment_intents":[{"id":"a"}]}', change)).toBe(
      '{"payment_intents":[{"id":"a"}]}',
    );
    expect(parseSchemaChanges([{ resource: 'balance', change: 'drop', field: 'owner_type' }])).toEqual([
      { resource: 'balance', change: 'drop', field: 'owner_type' },
    ]);
  });

  it('a field path reaches inside nested objects (location.foo) and every array item (open_hours[].note)', () => {
    const body = JSON.stringify({
      check_ins: [
        { id: 'a', location: { id: 'l', name: 'x' } },
        { id: 'b', location: null },
      ],
    });
    const changed = JSON.parse(
      applySchemaChanges('/users/me/check_ins', body, [
        { resource: 'member_check_ins', change: 'add', field: 'location.foo', value: 1 },
        { resource: 'member_check_ins', change: 'drop', field: 'location.name' },
        { resource: 'member_check_ins', change: 'retype', field: 'location.id', value: 7 },
      ]),
    ) as { check_ins: unknown[] };
    // The second record's location is null: nothing is created under it.
    expect(changed.check_ins).toEqual([
      { id: 'a', location: { id: 7, foo: 1 } },
      { id: 'b', location: null },
    ]);
    const hours = applySchemaChanges(
      '/locations/abc/open_hours',
      JSON.stringify({ object: 'open_hours', open_hours: [{ opens_at: '09:00' }, { opens_at: '10:00' }] }),
      [{ resource: 'location_open_hours', change: 'add', field: 'open_hours[].note', value: 'n' }],
    );
    expect(JSON.parse(hours)).toEqual({
      object: 'open_hours',
      open_hours: [
        { opens_at: '09:00', note: 'n' },
        { opens_at: '10:00', note: 'n' },
      ],
    });
  });

  it.each([
    ['/locations/abc', 'locations', '{"id":"abc"}', { id: 'abc', x: 1 }],
    [
      '/users/me/memberships',
      'memberships',
      '{"memberships":[{"id":"m"}]}',
      { memberships: [{ id: 'm', x: 1 }] },
    ],
    [
      '/users/me/check_ins',
      'member_check_ins',
      '{"check_ins":[{"id":"c"}]}',
      { check_ins: [{ id: 'c', x: 1 }] },
    ],
    ['/balance', 'balance', '{"id":"b"}', { id: 'b', x: 1 }],
  ] as const)('%s answers carry the changes of %s', (path, resource, body, expected) => {
    const changes = [{ resource, change: 'add' as const, field: 'x', value: 1 }];
    expect(JSON.parse(applySchemaChanges(path, body, changes))).toEqual(expected);
    // The venue feed is another resource than the member's check-ins.
    if (resource === 'member_check_ins') expect(applySchemaChanges('/check_ins', body, changes)).toBe(body);
  });
});
