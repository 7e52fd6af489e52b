import pMap from 'p-map';
import { driftOf } from '../../records/parse.js';
import { salvagePaymentIntent, type PaymentIntent } from '../../records/payment-intent.js';
import { driftCounts } from '../../records/schema-drift.js';
import { planIntentFetches } from '../../sync/intent-fetch-plan.js';
import { nextPollAt, type DueIntent } from '../../sync/intent-poll-schedule.js';
import { findRowsWithoutFullForm } from '../../warehouse/payment-intent-polling.js';
import { loadStoredIntents, markLookedAt, type StoredIntent } from '../../warehouse/payment-intents.js';
import { storeRejections } from '../../warehouse/rejected-records.js';
import { stopsThePass } from '../pass-stop.js';
import { noteSchemaDrift } from '../schema-drift.js';
import { noteObservation } from './note-observation.js';
import { recordFallback, recordFromList } from './record-from-list.js';
import { recordIntentObservation } from './record-observation.js';
import { INTENTS_STREAM } from './stream-name.js';
import type { SweepResult } from './sweep.js';
import type { Fetch, Tick } from './tick-context.js';

export interface FetchesResult {
  deferredChanges: Fetch[];
  failedFirstSights: Date[];
  dueLeft: number;
}

/** By-id fetches of the full form, as planIntentFetches orders them within what is left of the budget. */
export async function fetchFullForms(
  tick: Tick,
  input: { due: readonly DueIntent[]; sweep: SweepResult },
): Promise<FetchesResult> {
  const { db } = tick.deps;
  const settled = await Promise.allSettled(input.sweep.readsFirst);
  const plan = planIntentFetches({
    changes: input.sweep.toFetch,
    due: input.due,
    seen: input.sweep.seen,
    // Within the full-form room (the share's reserve while the pass ticks), never past the budget.
    remaining: Math.min(tick.budget - tick.stats.requests, fullFormRoomLeft(tick, input.sweep)),
  });
  const planned: Fetch[] = [...plan.changes, ...plan.duePolls.map((id): Fetch => ({ id, why: 'due' }))];
  const backfill = await findRowsWithoutFullForm(db, {
    limit: plan.backfillLimit,
    exclude: planned.map((f) => f.id),
  });
  planned.push(...backfill.map((id): Fetch => ({ id, why: 'backfill' })));
  const stored = await loadStoredIntents(
    db,
    planned.map((f) => f.id),
  );
  // A payment whose full-form read did not fit is recorded from the list form now: it never waits.
  const deferredChanges: Fetch[] = [];
  for (const fetch of plan.deferredChanges) {
    if (fetch.fallback === undefined) deferredChanges.push(fetch);
    else await recordFromList(tick, fetch.fallback, tick.deps.clock.now());
  }
  const failedFirstSights = await fetchAll(tick, planned, stored);
  // A read started early that hit an error stopping the pass stops it here, as one in fetchAll does.
  for (const outcome of settled) if (outcome.status === 'rejected') throw outcome.reason;
  return { deferredChanges, failedFirstSights, dueLeft: plan.dueLeft };
}

/** The by-id reads left of the tick's full-form room after the payments read first as the sweep went. */
function fullFormRoomLeft(tick: Tick, sweep: SweepResult): number {
  if (tick.settings.slotMs <= 0) return Number.POSITIVE_INFINITY;
  return Math.max(0, tick.fullFormRoom - sweep.readsFirst.length);
}

/**
 * The by-id read of a payment the list showed before its full form was stored, started as its page
 * is applied (within the tick's full-form room): recorded from the full form, or from the list form
 * when the read fails or finds nothing. Rejects only with an error that stops the pass.
 */
export async function readPaymentFirst(
  tick: Tick,
  fetch: Fetch,
  stored: StoredIntent | undefined,
): Promise<void> {
  try {
    const recorded = await fetchAndRecord(tick, fetch, stored);
    if (!recorded && fetch.fallback !== undefined) await recordFallback(tick, fetch.fallback);
  } catch (error) {
    if (stopsThePass(error)) throw error;
    tick.noteError(error, { paymentIntentId: fetch.id, why: fetch.why });
    if (fetch.fallback !== undefined) await recordFallback(tick, fetch.fallback);
  }
}

/**
 * Runs the fetches, `concurrency` at a time. After an error that stops the pass, no further fetch
 * starts; those in flight finish. Returns the created_at of first sights that could not be recorded.
 */
async function fetchAll(
  tick: Tick,
  planned: readonly Fetch[],
  stored: ReadonlyMap<string, StoredIntent>,
): Promise<Date[]> {
  const failedFirstSights: Date[] = [];
  let stopped: Error | undefined;
  await pMap(
    planned,
    async (fetch) => {
      if (tick.deps.signal?.aborted === true || stopped !== undefined) return;
      const previous = stored.get(fetch.id)?.status ?? null;
      try {
        const recorded = await fetchAndRecord(tick, fetch, stored.get(fetch.id));
        if (!recorded && fetch.fallback !== undefined) await recordFallback(tick, fetch.fallback);
        else if (!recorded && previous === null && fetch.createdAt) failedFirstSights.push(fetch.createdAt);
      } catch (error) {
        if (stopsThePass(error)) {
          stopped ??= error;
          return;
        }
        tick.noteError(error, { paymentIntentId: fetch.id, why: fetch.why });
        if (fetch.fallback !== undefined) await recordFallback(tick, fetch.fallback);
        else if (previous === null && fetch.createdAt) failedFirstSights.push(fetch.createdAt);
      }
    },
    { concurrency: tick.settings.concurrency },
  );
  if (stopped !== undefined) throw stopped;
  return failedFirstSights;
}

/**
 * One by-id fetch and what it means: the full form recorded; or, when it fails validation, the
 * fields that validate (readFullForm) with the full form in rejected_records; or, on a 404, polling
 * stops. Returns whether anything was recorded.
 */
async function fetchAndRecord(tick: Tick, fetch: Fetch, before: StoredIntent | undefined): Promise<boolean> {
  const { deps, settings, state } = tick;
  const previous = before?.status ?? null;
  const { intent, observedAt, gone } = await readFullForm(tick, fetch);
  if (intent === null) {
    if (previous !== null) await markLookedAt(deps.db, fetch.id, observedAt, { stopPolling: gone });
    return false;
  }
  tick.stats.fetched++;
  const pollAt = nextPollAt(
    {
      now: observedAt,
      createdAt: intent.createdAt,
      expiresAt: intent.expiresAt,
      pollCount: (before?.pollCount ?? 0) + 1,
      status: intent.status,
    },
    settings.schedule,
  );
  const outcome = await recordIntentObservation(deps.db, {
    intent,
    previous,
    observedAt,
    watchingSince: state.watchingSince,
    events: deps.config.alerts.events,
    nextPollAt: pollAt,
  });
  noteObservation(tick, intent, { previous, outcome, fromList: false });
  return true;
}

/**
 * `GET /payment_intents/{id}`: the full form; when it fails validation, what validates of it
 * (salvagePaymentIntent, helped by the list form that asked) with the full form in rejected_records;
 * null on a 404 (`gone`) or when nothing is usable.
 */
async function readFullForm(
  tick: Tick,
  fetch: Fetch,
): Promise<{ intent: PaymentIntent | null; observedAt: Date; gone: boolean }> {
  const { deps, stats, log } = tick;
  stats.requests++;
  stats.fullFormReads++;
  const result = await deps.api.getPaymentIntent(fetch.id, { priority: 'high', signal: deps.signal });
  const observedAt = deps.clock.now();
  if (result === null) {
    log.warn({ paymentIntentId: fetch.id }, 'payment intent no longer exists (404); polling stops');
    return { intent: null, observedAt, gone: true };
  }
  await noteSchemaDrift(deps, 'payment_intents', driftCounts(driftOf(result)));
  if (result.ok) return { intent: result.record, observedAt, gone: false };
  stats.rejected++;
  deps.metrics.recordsRejected.inc({ stream: INTENTS_STREAM });
  await storeRejections(deps.db, INTENTS_STREAM, [result.rejection], observedAt);
  const intent = salvagePaymentIntent(fetch.id, result.rejection.payload, fetch.listed);
  if (intent !== null) stats.salvaged++;
  log.warn(
    { paymentIntentId: fetch.id, reason: result.rejection.reason, salvaged: intent !== null },
    intent === null
      ? 'payment intent full form rejected; nothing usable in it'
      : 'payment intent full form rejected; recorded from the fields that validated',
  );
  return { intent, observedAt, gone: false };
}
