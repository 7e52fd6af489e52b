import type { PartnerApi } from '../../api/partner-api.js';
import type { IntentPassTuning } from '../../config.js';
import type { PaymentIntent } from '../../records/payment-intent.js';
import type { PollSchedulePolicy } from '../../sync/intent-poll-schedule.js';
import type { IntentStreamState } from '../../warehouse/intent-stream-state.js';
import type { StreamDeps } from '../stream.js';

/** The pass's tuning (INTENT_PASS_TUNING unless overridden) and poll schedule. */
export type IntentPassSettings = IntentPassTuning & { schedule: PollSchedulePolicy };

/** A by-id fetch of the full form, and why. */
export interface Fetch {
  id: string;
  why: 'changed' | 'first-sight' | 'due' | 'backfill';
  createdAt?: Date | undefined;
  /** The list form that asked for this fetch: what is known if the full form fails validation. */
  listed?: PaymentIntent;
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
  fetched: number;
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
  fetched: 0,
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
  stats: TickStats;
  /** The stream's logger (bound to `stream: payment_intents`). */
  log: StreamDeps<PartnerApi>['logger'];
  lastError?: string;
  noteError(error: unknown, what: Record<string, unknown>): void;
}
