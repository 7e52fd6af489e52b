/**
 * The event types the webhook can receive (ALERT_EVENTS, docs/payment-intents.md "Events"). Each
 * is sent at most once per (type, subject), signed, and retried until accepted.
 */
export const ALERT_EVENT_TYPES = [
  'payment_intent.paid',
  'payment_intent.canceled',
  'payment_intent.refunded',
  'schema.drift',
  'member.needs_reauth',
] as const;
export type AlertEventType = (typeof ALERT_EVENT_TYPES)[number];

/** Today's behaviour, and the default: paid alerts only. */
export const DEFAULT_ALERT_EVENTS: readonly AlertEventType[] = ['payment_intent.paid'];

export function isAlertEventType(value: string): value is AlertEventType {
  return (ALERT_EVENT_TYPES as readonly string[]).includes(value);
}

/**
 * ALERT_EVENTS as written: a comma list, spaces around names allowed, duplicates folded. An empty
 * list is refused (no events at all is not a typo we want to guess at), as is any unknown name.
 */
export function parseAlertEvents(
  text: string,
): { ok: true; events: AlertEventType[] } | { ok: false; reason: string } {
  const names = text
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
  if (names.length === 0)
    return { ok: false, reason: `must list at least one of ${ALERT_EVENT_TYPES.join(', ')}` };
  const unknown = names.filter((name) => !isAlertEventType(name));
  if (unknown.length > 0) {
    return {
      ok: false,
      reason: `unknown event ${unknown.map((name) => JSON.stringify(name)).join(', ')} (known: ${ALERT_EVENT_TYPES.join(', ')})`,
    };
  }
  return { ok: true, events: [...new Set(names as AlertEventType[])] };
}
