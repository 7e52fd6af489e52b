import type { StreamName } from '../stream-names.js';

/** The stream's name in the registry: sync_state, sync_runs, rejected_records and metrics use it. */
export const INTENTS_STREAM = 'payment_intents' satisfies StreamName;
