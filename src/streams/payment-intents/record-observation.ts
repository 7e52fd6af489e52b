import type { Kysely } from 'kysely';
import {
  decideIntentObservation,
  type IntentObservation,
  type IntentObservationDecision,
} from '../../sync/intent-observation.js';
import { recordIntentEvent } from '../../alerts/raise-intent-event.js';
import { recordIntentTransitions, writeFullFormObservation } from '../../warehouse/payment-intents.js';
import type { DB } from '../../warehouse/schema.js';

export type ObservationOutcome =
  | {
      written: true;
      decision: IntentObservationDecision;
      /** The event recorded with this observation (paid, canceled or refunded), if any. */
      alertId: string | null;
    }
  /** Another poller changed (or inserted) the row since `previous` was read: it records the change. */
  | { written: false; reason: 'lost-race' | 'stale'; decision: IntentObservationDecision };

export interface RecordedObservation extends IntentObservation {
  observedAt: Date;
  nextPollAt: Date | null;
}

/**
 * Records one observation of an intent with the decision made for it (decideIntentObservation; the
 * list path decides in routeListedIntent), in one transaction: the intent row (conditional on the
 * status this poller read, so a poller that lost a race records nothing), the transition, and the
 * event. The unique indexes on (payment_intent_id, to_status) and (type, payment_intent_id) make
 * duplicates impossible even if the status condition were bypassed.
 */
export async function recordIntentObservation(
  db: Kysely<DB>,
  observation: RecordedObservation,
  decision: IntentObservationDecision = decideIntentObservation(observation),
): Promise<ObservationOutcome> {
  if (decision.stale) return { written: false, reason: 'stale', decision };
  const { intent, observedAt } = observation;
  return db.transaction().execute(async (tx): Promise<ObservationOutcome> => {
    const wrote = await writeFullFormObservation(tx, observation);
    if (!wrote) return { written: false, reason: 'lost-race', decision };
    if (decision.transition !== undefined)
      await recordIntentTransitions(tx, [{ paymentIntentId: intent.id, ...decision.transition, observedAt }]);
    const alertId =
      decision.event === null
        ? null
        : await recordIntentEvent(tx, { event: decision.event, intent, at: observedAt });
    return { written: true, decision, alertId };
  });
}
