import type { PartnerApi } from '../../api/partner-api.js';
import type { PaymentIntent } from '../../records/payment-intent.js';
import type { ListedIntentRoute } from '../../sync/intent-observation.js';
import type { PollSchedulePolicy } from '../../sync/intent-poll-schedule.js';
import type { IntentStreamState } from '../../warehouse/intent-stream-state.js';
import type { OpenIntentsReach } from '../../warehouse/payment-intent-polling.js';
import type { StreamDeps } from '../stream.js';
import type { IntentPassTuning } from './tuning.js';

/** The pass's tuning (INTENT_PASS_TUNING unless overridden) and poll schedule. */
export type IntentPassSettings = IntentPassTuning & { schedule: PollSchedulePolicy };

/** A payment the list showed, recorded from the list form (routeListedIntent). */
export type RecordFromList = Extract<ListedIntentRoute, { kind: 'record-from-list' }>;

/** A by-id fetch of the full form, and why. */
export interface Fetch {
  id: string;
  why: 'changed' | 'first-sight' | 'due' | 'backfill';
  createdAt?: Date | undefined;
  /** The list form that asked for this fetch: what is known if the full form fails validation. */
  listed?: PaymentIntent;
  /**
   * A payment read by id first because the budget afforded it: recorded from the list form instead
   * when the read is deferred or fails, so it never waits for a by-id read.
   */
  fallback?: RecordFromList;
}

/** Counters of one tick, summed over a pass. */
export interface TickStats {
  requests: number;
  pages: number;
  firstSights: number;
  transitions: number;
  alerts: number;
  /** Payments seen in the list whose alert needs no by-id fetch, and the alerts so raised. */
  paidSeenInList: number;
  alertsFromList: number;
  /** Alerts raised from the list form before the intent's full form was ever read. */
  alertsBeforeFullForm: number;
  fetched: number;
  /** Full forms read (by-id requests), within the full-form share unless the round left budget. */
  fullFormReads: number;
  /** List looks that showed nothing new and were not written. */
  unchangedNotWritten: number;
  /** List rounds completed (every open intent seen once per round). */
  rounds: number;
  /** The ticks' budgets, summed (the intents' allowance over each tick's interval). */
  allowed: number;
  errors: number;
  rejected: number;
  salvaged: number;
}

export const emptyTickStats = (): TickStats => ({
  requests: 0,
  pages: 0,
  firstSights: 0,
  transitions: 0,
  alerts: 0,
  paidSeenInList: 0,
  alertsFromList: 0,
  alertsBeforeFullForm: 0,
  fetched: 0,
  fullFormReads: 0,
  unchangedNotWritten: 0,
  rounds: 0,
  allowed: 0,
  errors: 0,
  rejected: 0,
  salvaged: 0,
});

export function addTickStats(into: TickStats, from: TickStats): void {
  for (const key of Object.keys(into) as (keyof TickStats)[]) into[key] += from[key];
}

/** What one tick shares between its steps. */
export interface Tick {
  deps: StreamDeps<PartnerApi>;
  settings: IntentPassSettings;
  state: IntentStreamState;
  payee: string | undefined;
  startedAt: Date;
  budget: number;
  /** By-id reads this tick keeps from the list round (the full-form share, carried over ticks). */
  fullFormReserve: number;
  /**
   * By-id reads the tick may make: the reserve while the pass ticks (rounds get the rest); for a pass
   * of one tick, whatever its part of the round leaves. Payments the list shows are read by id first
   * only while the reads queued are fewer; past it they are recorded from the list form at once.
   */
  fullFormRoom: number;
  /**
   * How deep the round past the open intents reads (openIntentsReach over the newest maxRoundRows
   * rows; open intents below are polled by id); null when none is open.
   */
  reach: OpenIntentsReach | null;
  stats: TickStats;
  /** The stream's logger (bound to `stream: payment_intents`). */
  log: StreamDeps<PartnerApi>['logger'];
  lastError?: string;
  noteError(error: unknown, what: Record<string, unknown>): void;
}
