import { READ_KINDS } from '../../../src/sync/read-cadence.js';

/**
 * Settings under which every kind of every member is due on every pass (ceilings of 1 ms): what
 * a members pass did before the adaptive cadence, for tests of what one sync of a member does.
 */
export const EVERY_PASS = {
  FRESHNESS_FLOOR: '1ms',
  FRESHNESS_CEILINGS: READ_KINDS.map((kind) => `${kind}=1ms`).join(','),
} as const;
