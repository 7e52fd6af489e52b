import { STREAM_NAME } from '../../sync/stream-facts.js';

/** The stream's name in the registry: sync_state, sync_runs, rejected_records and metrics use it. */
export const INTENTS_STREAM = STREAM_NAME.payment_intents;
