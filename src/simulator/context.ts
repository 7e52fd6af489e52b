import type { SimulatorClock } from './clock.js';
import type { CredentialStore } from './credentials.js';
import type { FaultInjector } from './faults.js';
import type { Prng } from './prng.js';
import type { World } from './world.js';

/** Work done by the last check-in feed query: shows it is ~page_size + log n, not n. */
export interface QueryStats {
  path: string;
  rowsExamined: number;
  rowsReturned: number;
  totalCount: number;
  storeSize: number;
}

export interface SimContext {
  world: World;
  clock: SimulatorClock;
  credentials: CredentialStore;
  faults: FaultInjector;
  stats: { last: QueryStats | null };
  /** Ids for records created at run time (deterministic for a given sequence of calls). */
  runtimeIds: Prng;
}
