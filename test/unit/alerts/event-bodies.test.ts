import { describe, expect, it } from 'vitest';
import { serializeAlertBody } from '../../../src/alerts/alert-body.js';

const createdAt = new Date('2026-11-26T12:00:00.000Z');

describe('event bodies', () => {
  it('a payment_intent.paid body is byte for byte what it was before event types existed', () => {
    const payload = { id: 'pi', amount: { value: '1', currency: 'svc' } };
    const before = JSON.stringify({
      id: 'a1',
      type: 'payment_intent.paid',
      created_at: createdAt.toISOString(),
      data: { payment_intent: payload },
    });
    expect(serializeAlertBody({ id: 'a1', createdAt, payload })).toBe(before);
    expect(serializeAlertBody({ id: 'a1', type: 'payment_intent.paid', createdAt, payload })).toBe(before);
  });

  it.each([
    ['payment_intent.canceled', 'payment_intent'],
    ['payment_intent.refunded', 'payment_intent'],
    ['schema.drift', 'schema_drift'],
    ['member.needs_reauth', 'member'],
  ])('%s carries its payload under data.%s', (type, key) => {
    const body = JSON.parse(serializeAlertBody({ id: 'a2', type, createdAt, payload: { x: 1 } })) as Record<
      string,
      unknown
    >;
    expect(Object.keys(body)).toEqual(['id', 'type', 'created_at', 'data']);
    expect(body['type']).toBe(type);
    expect(body['data']).toEqual({ [key]: { x: 1 } });
  });
});
