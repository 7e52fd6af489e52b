import { parseDuration } from '../duration.js';
import { isReadKind, READ_KINDS, type Cadence, type ReadKind } from './read-cadence.js';

// The ceilings of the adaptive cadence, per kind of record (docs/freshness.md). A member's visits
// change every few hours for an active member, wallets never: one ceiling for all would either
// leave new visits waiting a day or spend the budget re-reading wallets.

/** How long a record may go unread at most, per kind, unless FRESHNESS_CEILINGS says otherwise. */
export const DEFAULT_READ_CEILINGS_MS: Record<ReadKind, number> = {
  'member.profile': 86_400_000,
  'member.status': 86_400_000,
  'member.wallets': 7 * 86_400_000,
  'member.tags': 86_400_000,
  // A new visit should reach the warehouse within the hour (issue 32): a member who dines every few
  // days is read hourly; bench/freshness.ts measured 2 h giving a new-visit p95 of 1.8 h, 1 h 55 min.
  'member.visits': 3_600_000,
  'member.memberships': 86_400_000,
  // Challenges change with a restaurant's campaigns (days to weeks): a restaurant quiet for weeks
  // is still re-read four times a day, one that changed is read again within the hour.
  'restaurant.challenges': 6 * 3_600_000,
  // A location's reduced form (GET /locations/{id}) and its open hours change every few months;
  // the feed brings the full form of every location with a check-in anyway. A week costs two
  // requests per location per week (20,000 locations: about 240 requests an hour).
  'location.full': 7 * 86_400_000,
  'location.open_hours': 7 * 86_400_000,
};

/**
 * `member.visits=1h,member.wallets=3d`: the kinds named get that ceiling, the others keep theirs.
 * Throws with a message for the setting's error (an unknown kind, a bad duration).
 */
export function parseReadCeilings(text: string): Partial<Record<ReadKind, number>> {
  const ceilings: Partial<Record<ReadKind, number>> = {};
  for (const item of text.split(',')) {
    const entry = item.trim();
    if (entry === '') continue;
    const [kind, duration, ...rest] = entry.split('=');
    if (kind === undefined || duration === undefined || rest.length > 0)
      throw new Error(`"${entry}" is not kind=duration (e.g. member.visits=1h)`);
    const name = kind.trim();
    if (!isReadKind(name)) throw new Error(`unknown kind "${name}" (known: ${READ_KINDS.join(', ')})`);
    const ms = parseDuration(duration);
    if (ms <= 0) throw new Error(`the ceiling of ${name} must be longer than 0`);
    ceilings[name] = ms;
  }
  return ceilings;
}

/** Each kind's floor and ceiling: FRESHNESS_FLOOR for all, the ceiling per kind. */
export function cadencesFrom(
  floorMs: number,
  overrides: Partial<Record<ReadKind, number>>,
): Record<ReadKind, Cadence> {
  return Object.fromEntries(
    READ_KINDS.map((kind) => [
      kind,
      { floorMs, ceilingMs: overrides[kind] ?? DEFAULT_READ_CEILINGS_MS[kind] },
    ]),
  ) as Record<ReadKind, Cadence>;
}
