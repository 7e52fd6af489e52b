/**
 * The bottom of src/streams/: the stream names, whose home is the streams' facts
 * (src/sync/stream-facts.ts, below the config, the API client and the budget that derive from
 * them). A pass names its own stream from there (`STREAM_NAME.balance`); the registry (registry.ts,
 * the top of the folder) is keyed by exactly these names, so a pass never imports the registry
 * that loads it. Kept for src/streams/payment-intents/stream-name.ts until it imports
 * src/sync/stream-facts.ts itself (issue 42).
 */
export type { StreamName } from '../sync/stream-facts.js';
