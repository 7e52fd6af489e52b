import { stopsThePass } from '../pass-stop.js';
import { noteObservation } from './note-observation.js';
import { recordIntentObservation } from './record-observation.js';
import type { RecordFromList, Tick } from './tick-context.js';

/** Records a payment from the list form (the decision routeListedIntent made) and starts its delivery. */
export async function recordFromList(tick: Tick, route: RecordFromList, observedAt: Date): Promise<void> {
  const { intent, previous, decision } = route;
  if (intent.status === 'paid') tick.stats.paidSeenInList++;
  const outcome = await recordIntentObservation(
    tick.deps.db,
    { intent, previous, observedAt, watchingSince: tick.state.watchingSince, nextPollAt: null },
    decision,
  );
  noteObservation(tick, intent, { previous, outcome, fromList: true });
  if (outcome.written && outcome.alertId !== null && route.fullFormMissing) tick.stats.alertsBeforeFullForm++;
}

/** A payment whose full-form read failed: recorded from the list form (a failure here is noted). */
export async function recordFallback(tick: Tick, route: RecordFromList): Promise<void> {
  try {
    await recordFromList(tick, route, tick.deps.clock.now());
  } catch (error) {
    if (stopsThePass(error)) throw error;
    tick.noteError(error, { paymentIntentId: route.intent.id, during: 'record from the list form' });
  }
}
