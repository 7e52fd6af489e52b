import type { MemberActivityClass } from '../changes/change-settings.js';
import {
  activityClassOf,
  memberVisitLengthMs,
  nextRhythmicArrival,
  rhythmAt,
} from '../changes/rhythmic-arrivals.js';
import { createPrng, type Prng } from '../prng.js';
import type { LocationRecord, MemberCheckIn, MemberRecord } from '../world.js';
import { FIRST_NAMES, LAST_NAMES, NEIGHBORHOODS } from './catalog.js';
import type { Rhythm } from './rhythm.js';
import { status, wallet } from './generate-members.js';

const DAY_MS = 86_400_000;
const TOKEN = 10n ** 18n;
const ACCOUNT_TROUBLES: MemberRecord['accountStatus'][] = [
  'suspended',
  'payment_disputed',
  'payment_failed',
  'unpaid_check',
  'negative_balance',
];

export interface CrowdOptions {
  seed: number;
  anchorMs: number;
  /** Days of visit history before the anchor. */
  days: number;
  /** Member indexes [from, to): the fixture's four come before. */
  from: number;
  to: number;
  locations: LocationRecord[];
  /** UTC offset (minutes) of each neighborhood, by neighborhood index. */
  neighborhoodOffsets: number[];
  activity: readonly MemberActivityClass[];
  rhythm: Rhythm;
}

/**
 * Members beyond the fixture's four, each from its own random stream (`member:<index>`), so member i
 * is the same whatever the world's size: a profile, both wallets, an active status for 95 % of them
 * (the rest only an expired one, 404 on /users/me/status), the industry tag for 2 %, and a visit
 * history over `days` that follows the member's activity class and the day's rhythm in local time,
 * 70 % of visits at one of three favourite locations.
 */
export function generateCrowd(options: CrowdOptions): MemberRecord[] {
  const members: MemberRecord[] = [];
  for (let index = options.from; index < options.to; index++) members.push(crowdMember(options, index));
  return members;
}

function crowdMember(options: CrowdOptions, index: number): MemberRecord {
  const { seed, anchorMs, locations } = options;
  const rng = createPrng(seed, `member:${index}`);
  const id = rng.uuid();
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  const createdAtMs = Math.floor((anchorMs - rng.between(30, 900) * DAY_MS) / 1000) * 1000;
  const favourites = [rng.pick(locations), rng.pick(locations), rng.pick(locations)];
  const home = NEIGHBORHOODS[favourites[0]?.neighborhoodIndex ?? 0];
  const hasActiveStatus = rng.chance(0.95);
  return {
    id,
    firstName: first,
    lastName: last,
    email: `${first}.${last}${index}@example.com`.toLowerCase(),
    phoneNumber: rng.chance(0.8) ? `+1${rng.between(201, 989)}${rng.between(2000000, 9999999)}` : null,
    birthdate: rng.chance(0.85)
      ? `19${rng.between(50, 99)}-${String(rng.between(1, 12)).padStart(2, '0')}-${String(rng.between(1, 28)).padStart(2, '0')}`
      : null,
    zipcode: rng.chance(0.9) ? (home?.zip ?? null) : null,
    avatar: rng.chance(0.6) ? `https://assets.svc-sim.example/avatars/${id}.png` : null,
    accountStatus: rng.chance(0.97) ? 'ok' : rng.pick(ACCOUNT_TROUBLES),
    createdAtMs,
    updatedAtMs: Math.max(createdAtMs, anchorMs - rng.between(0, 120) * DAY_MS),
    wallets: [
      wallet(rng, id, 'MEMBERSHIP', 0n, createdAtMs),
      wallet(rng, id, 'SPENDING', BigInt(rng.between(5_000, 20_000)) * TOKEN, createdAtMs),
    ],
    tags: rng.chance(0.02)
      ? [
          {
            type: 'industry',
            metadata: [{ key: 'restaurant_ids', value: [favourites[0]?.id ?? ''] }],
            createdAtMs,
            updatedAtMs: createdAtMs,
          },
        ]
      : [],
    statuses: hasActiveStatus
      ? [status(rng, anchorMs, 'active', rng.between(1, 7))]
      : [status(rng, anchorMs - 400 * DAY_MS, 'expired', rng.between(1, 3))],
    checkIns: visitHistory(options, rng, index, favourites, createdAtMs),
    favouriteLocations: favourites.map((l) => l.index),
  };
}

/**
 * Visits from max(joined, anchor − days) to the anchor, newest first, as the change model makes them:
 * starts at the member's rhythm, each visit 25–110 minutes or until the next check-in; the newest may
 * still be ongoing.
 */
function visitHistory(
  options: CrowdOptions,
  rng: Prng,
  index: number,
  favourites: LocationRecord[],
  joinedAtMs: number,
): MemberCheckIn[] {
  const { anchorMs, locations, activity } = options;
  const gapMs = activity[activityClassOf(options.seed, index, activity)]?.visitEveryMs ?? 0;
  const offset = options.neighborhoodOffsets[favourites[0]?.neighborhoodIndex ?? 0] ?? 0;
  const visits: MemberCheckIn[] = [];
  let plannedEndMs = 0;
  for (let at = Math.max(joinedAtMs, anchorMs - options.days * DAY_MS); ;) {
    at = nextRhythmicArrival(rng, at, gapMs, (ms) => rhythmAt(ms, offset, options.rhythm));
    if (!(at < anchorMs)) break;
    const createdAtMs = Math.floor(at / 1000) * 1000;
    const previous = visits[visits.length - 1];
    if (previous && plannedEndMs > createdAtMs) previous.endedAtMs = createdAtMs;
    const location = rng.chance(0.7) ? rng.pick(favourites) : rng.pick(locations);
    plannedEndMs = createdAtMs + memberVisitLengthMs(rng);
    visits.push({
      id: rng.uuid(),
      locationIndex: location.index,
      svcPayEnabled: location.paymentsEnabled,
      createdAtMs,
      endedAtMs: plannedEndMs > anchorMs ? null : plannedEndMs,
    });
  }
  return visits.reverse();
}
