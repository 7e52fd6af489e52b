import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/config.js';
import { ConfigError } from '../../../src/config/config-error.js';

describe('ALERT_EVENTS', () => {
  it('defaults to payment_intent.paid alone: exactly the behaviour before the setting existed', () => {
    expect([...loadConfig({}).alerts.events]).toEqual(['payment_intent.paid']);
  });

  it('takes a comma list of the five event types, spaces and repeats allowed', () => {
    const config = loadConfig({
      ALERT_EVENTS:
        ' schema.drift , payment_intent.paid,payment_intent.canceled,payment_intent.refunded,member.needs_reauth,schema.drift',
    });
    expect([...config.alerts.events].sort()).toEqual([
      'member.needs_reauth',
      'payment_intent.canceled',
      'payment_intent.paid',
      'payment_intent.refunded',
      'schema.drift',
    ]);
  });

  it.each([
    ['an unknown name', 'payment_intent.paid,payment_intent.failed', /ALERT_EVENTS.*payment_intent\.failed/s],
    ['an empty list', ' , ', /ALERT_EVENTS.*at least one/s],
    ['a name in another case', 'Schema.Drift', /ALERT_EVENTS.*Schema\.Drift/s],
  ])('refuses %s, naming the variable (exit 2)', (_rule, value, message) => {
    const attempt = () => loadConfig({ ALERT_EVENTS: value });
    expect(attempt).toThrow(ConfigError);
    expect(attempt).toThrow(message);
  });
});
