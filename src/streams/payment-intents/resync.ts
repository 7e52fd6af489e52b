import pMap from 'p-map';
import { PartnerApiError } from '../../api/errors.js';
import type { PartnerApi } from '../../api/partner-api.js';
import {
  salvagePaymentIntent,
  type PaymentIntent,
  type PaymentIntentStatus,
} from '../../records/payment-intent.js';
import { DEFAULT_POLL_SCHEDULE, nextPollAt } from '../../sync/intent-poll-schedule.js';
import { planIntentResync, type ResyncProgress, type ResyncRange } from '../../sync/resync-plan.js';
import { loadIntentStreamState } from '../../warehouse/intent-stream-state.js';
import { loadStoredIntents, markLookedAt } from '../../warehouse/payment-intents.js';
import { storeRejections } from '../../warehouse/rejected-records.js';
import { storedIntentRefs } from '../../warehouse/resync.js';
import { deliverAlertsSoon } from '../../alerts/delivery.js';
import { stopsThePass } from '../pass-stop.js';
import { recordIntentObservation, type ObservationOutcome } from './record-observation.js';
import { INTENTS_STREAM as STREAM } from './stream-name.js';
import { INTENT_PASS_TUNING } from './tuning.js';
import type { PassOutcome, StreamDeps } from '../stream.js';

/** By-id reads in flight at once (the shared limiter paces them), as the pass does. */
const CONCURRENCY = INTENT_PASS_TUNING.concurrency;
/** A poller that changed the row between our read and our write: read it again, this many times. */
const MAX_RACES = 3;

export interface IntentsResyncOptions {
  range: ResyncRange;
  progress?: ResyncProgress | undefined;
}

type Counts = Record<
  'reread' | 'transitions' | 'alerts' | 'unchanged' | 'stale' | 'gone' | 'rejected' | 'salvaged' | 'failed',
  number
>;

/**
 * `resync payment_intents` (docs/resync.md): re-reads the full form (`GET /payment_intents/{id}`) of
 * every stored intent created in the range and records it exactly as a poll does
 * (recordIntentObservation): the row takes the full form's fields, a status change goes into the
 * transition ledger, and an event of ALERT_EVENTS (paid, canceled, refunded) is raised only when
 * decideIntentObservation calls for one; the unique (type, subject) index and the update conditional
 * on the status read keep it to one per intent and type, however often an intent is re-synced. An observation older than the stored
 * status (STATUS_RANK) changes nothing.
 */
export async function resyncPaymentIntents(
  deps: StreamDeps<PartnerApi>,
  options: IntentsResyncOptions,
): Promise<PassOutcome> {
  const { db, clock, signal } = deps;
  const plan = planIntentResync(await storedIntentRefs(db, options.range), options.range);
  const state = await loadIntentStreamState(db, STREAM, clock.now());
  const run: ResyncRun = {
    deps,
    log: deps.logger.child({ stream: STREAM }),
    watchingSince: state.watchingSince,
    counts: {
      reread: 0,
      transitions: 0,
      alerts: 0,
      unchanged: 0,
      stale: 0,
      gone: 0,
      rejected: 0,
      salvaged: 0,
      failed: 0,
    },
    requests: 0,
    lastError: undefined,
  };
  await resyncAll(run, plan.ids, options.progress);
  signal?.throwIfAborted();
  deps.metrics.rowsIngested.inc({ stream: STREAM }, run.counts.reread);
  return resyncOutcome(run, { intents: plan.ids.length, undated: plan.undated });
}

/** What the re-reads of one resync share. */
interface ResyncRun {
  deps: StreamDeps<PartnerApi>;
  log: StreamDeps<PartnerApi>['logger'];
  watchingSince: Date;
  counts: Counts;
  requests: number;
  lastError: string | undefined;
}

/** Every intent, CONCURRENCY at a time; after an error that stops the pass, no further one starts. */
async function resyncAll(
  run: ResyncRun,
  ids: readonly string[],
  progress: ResyncProgress | undefined,
): Promise<void> {
  const { signal } = run.deps;
  let stopped: Error | undefined;
  let finished = 0;
  const total = ids.length;
  progress?.({ done: 0, total, unit: 'intents' });
  await pMap(
    ids,
    async (id) => {
      if (stopped !== undefined || signal?.aborted === true) return;
      try {
        await resyncOne(run, id);
      } catch (error) {
        if (stopsThePass(error)) {
          stopped ??= error;
          return;
        }
        if (!(error instanceof PartnerApiError)) throw error;
        run.counts.failed++;
        run.lastError = error.message;
        run.log.warn({ paymentIntentId: id, err: error }, 'payment intent re-read failed');
      } finally {
        finished++;
        progress?.({ done: finished, total, unit: 'intents' });
      }
    },
    { concurrency: CONCURRENCY },
  );
  if (stopped !== undefined) throw stopped;
}

/** One intent: read by id, recorded against the status stored right before; again after a lost race. */
async function resyncOne(run: ResyncRun, id: string): Promise<void> {
  const { db } = run.deps;
  for (let race = 0; race < MAX_RACES; race++) {
    const before = (await loadStoredIntents(db, [id])).get(id);
    if (before === undefined) return; // forgotten meanwhile (nothing deletes intents today)
    const { intent, observedAt } = await readFullForm(run, id);
    if (intent === null) return;
    const outcome = await recordIntentObservation(db, {
      intent,
      previous: before.status,
      observedAt,
      watchingSince: run.watchingSince,
      events: run.deps.config.alerts.events,
      nextPollAt: nextPollAt(
        {
          now: observedAt,
          createdAt: intent.createdAt,
          expiresAt: intent.expiresAt,
          pollCount: before.pollCount + 1,
          status: intent.status,
        },
        DEFAULT_POLL_SCHEDULE,
      ),
    });
    if (!outcome.written && outcome.reason === 'lost-race') continue;
    noteResynced(run, { id, stored: before.status, observed: intent.status, outcome });
    return;
  }
  run.counts.failed++;
  run.lastError = `payment intent ${id} kept changing under other pollers; it was not re-synced`;
}

/**
 * The full form, or what validates of it (the full form kept in rejected_records); null on a 404
 * (polling stops) or when nothing in it is usable (the look is noted).
 */
async function readFullForm(
  run: ResyncRun,
  id: string,
): Promise<{ intent: PaymentIntent | null; observedAt: Date }> {
  const { deps, counts, log } = run;
  run.requests++;
  const result = await deps.api.getPaymentIntent(id, { priority: 'normal', signal: deps.signal });
  const observedAt = deps.clock.now();
  if (result === null) {
    counts.gone++;
    log.warn({ paymentIntentId: id }, 'payment intent no longer exists (404); polling stops');
    await markLookedAt(deps.db, id, observedAt, { stopPolling: true });
    return { intent: null, observedAt };
  }
  if (result.ok) return { intent: result.record, observedAt };
  counts.rejected++;
  deps.metrics.recordsRejected.inc({ stream: STREAM });
  await storeRejections(deps.db, STREAM, [result.rejection], observedAt);
  const intent = salvagePaymentIntent(id, result.rejection.payload, undefined);
  if (intent === null) await markLookedAt(deps.db, id, observedAt, { stopPolling: false });
  else counts.salvaged++;
  return { intent, observedAt };
}

/** Counts and logs a recorded (or stale) re-read, and starts delivering its alert at once. */
function noteResynced(
  run: ResyncRun,
  input: {
    id: string;
    stored: PaymentIntentStatus;
    observed: PaymentIntentStatus;
    outcome: ObservationOutcome;
  },
): void {
  const { counts, log } = run;
  const { id, outcome } = input;
  if (!outcome.written) {
    counts.stale++;
    log.warn(
      { paymentIntentId: id, stored: input.stored, observed: input.observed },
      'payment intent full form shows an earlier status than the one stored; kept the stored one',
    );
    return;
  }
  counts.reread++;
  if (outcome.decision.transition === undefined) counts.unchanged++;
  else {
    counts.transitions++;
    log.info({ paymentIntentId: id, ...outcome.decision.transition }, 'resync: payment intent transition');
  }
  if (outcome.alertId !== null) {
    counts.alerts++;
    deliverAlertsSoon(run.deps, [outcome.alertId]);
  }
}

function resyncOutcome(run: ResyncRun, plan: { intents: number; undated: number }): PassOutcome {
  const { counts, lastError } = run;
  const problems = [
    ...(counts.failed > 0 ? [`${counts.failed} intent(s) could not be re-read: ${lastError ?? ''}`] : []),
    ...(plan.undated > 0
      ? [
          `${plan.undated} stored intent(s) without created_at belong to no range; resync without --from/--to re-reads them`,
        ]
      : []),
  ];
  return {
    status: counts.failed === 0 ? 'succeeded' : counts.reread > 0 ? 'partial' : 'failed',
    rows: counts.reread,
    requests: run.requests,
    details: { resync: true, intents: plan.intents, ...counts, undated: plan.undated },
    ...(lastError === undefined ? {} : { error: lastError }),
    ...(problems.length === 0 ? {} : { problems }),
  };
}
