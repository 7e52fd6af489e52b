import { createPrng, type Prng } from '../prng.js';
import { addMemberRecord } from '../world-index.js';
import type {
  AppRecord,
  LocationRecord,
  MemberCheckIn,
  MemberRecord,
  StatusRecord,
  WalletRecord,
  World,
} from '../world.js';
import { FIRST_NAMES, LAST_NAMES } from './catalog.js';

const DAY_MS = 86_400_000;
const TOKEN = 10n ** 18n;

export function wallet(
  rng: Prng,
  ownerId: string,
  type: WalletRecord['type'],
  balance: bigint,
  atMs: number,
): WalletRecord {
  return {
    id: rng.uuid(),
    ownerId,
    type,
    address: `0x${rng.uuid().replace(/-/g, '')}${rng.alphanumeric(8).toLowerCase()}`,
    balance,
    createdAtMs: atMs,
    updatedAtMs: atMs,
  };
}

/** Shared by every status record (never changed in place). */
const BENEFITS = [
  { title: 'Priority seating', description: 'Skip the line at partner venues.' },
  { title: 'Bonus tokens', description: 'Earn extra tokens on every visit.' },
];

/** What a status level shows: tier string (it can carry a newline), track and token multiplier. */
export function levelTraits(level: number): Pick<StatusRecord, 'tier' | 'track' | 'tokenMultiplier'> {
  return {
    tier: level >= 5 ? 'Gold\nInsider' : 'Silver',
    track: level >= 6 ? 'pro' : 'regular',
    tokenMultiplier: level >= 6 ? 3 : level >= 3 ? 2 : 1,
  };
}

export function status(
  rng: Prng,
  anchorMs: number,
  state: StatusRecord['state'],
  level: number,
): StatusRecord {
  const year = new Date(anchorMs).getUTCFullYear();
  const startedAtMs = anchorMs - rng.between(10, 200) * DAY_MS;
  const traits = levelTraits(level);
  return {
    id: rng.uuid(),
    // The real tier string can carry a newline; clients must not assume one line.
    tier: traits.tier,
    level,
    track: traits.track,
    tokenMultiplier: traits.tokenMultiplier,
    state,
    benefits: BENEFITS,
    progress: {
      checkIns: rng.between(0, 40),
      checkInThreshold: 50,
      spendCents: rng.between(0, 200_000),
      spendThresholdCents: 250_000,
      tokenDeposit: BigInt(rng.between(0, 900)) * TOKEN,
      tokenDepositThreshold: 1000n * TOKEN,
    },
    yearStartMs: Date.UTC(year, 0, 1),
    yearEndMs: Date.UTC(year + 1, 0, 1) - 1000,
    startedAtMs,
    createdAtMs: startedAtMs,
    updatedAtMs: anchorMs - rng.between(0, 9) * DAY_MS,
  };
}

function memberCheckIns(
  rng: Prng,
  anchorMs: number,
  locations: LocationRecord[],
  count: number,
): { visits: MemberCheckIn[]; favourites: number[] } {
  const favourites = [rng.pick(locations), rng.pick(locations), rng.pick(locations)];
  const visits: MemberCheckIn[] = [];
  for (let i = 0; i < count; i++) {
    const location = rng.chance(0.7) ? rng.pick(favourites) : rng.pick(locations);
    const createdAtMs = Math.floor((anchorMs - rng.next() * 90 * DAY_MS) / 1000) * 1000;
    visits.push({
      id: rng.uuid(),
      locationIndex: location.index,
      svcPayEnabled: location.paymentsEnabled,
      createdAtMs,
      endedAtMs: createdAtMs + rng.between(25, 110) * 60_000,
    });
  }
  visits.sort((a, b) => b.createdAtMs - a.createdAtMs);
  const newest = visits[0];
  if (newest) {
    newest.createdAtMs = anchorMs - 20 * 60_000; // the member is dining right now
    newest.endedAtMs = null;
  }
  return { visits, favourites: favourites.map((l) => l.index) };
}

/**
 * Member 0 is the default OAuth subject: active status, industry tag, rich balance.
 * Member 1 has only an expired status (404 on /users/me/status) and almost no tokens (payment0030).
 */
export function generateMembers(seed: number, anchorMs: number, locations: LocationRecord[]): MemberRecord[] {
  const rng = createPrng(seed, 'members');
  const members: MemberRecord[] = [];
  for (let i = 0; i < 4; i++) {
    const id = rng.uuid();
    const first = rng.pick(FIRST_NAMES);
    const last = rng.pick(LAST_NAMES);
    const createdAtMs = anchorMs - rng.between(100, 700) * DAY_MS;
    const spending = i === 1 ? 5n : BigInt(rng.between(5_000, 20_000)) * TOKEN;
    const member: Omit<MemberRecord, 'checkIns' | 'favouriteLocations'> = {
      id,
      firstName: first,
      lastName: last,
      email: `${first}.${last}${i}@example.com`.toLowerCase(),
      phoneNumber: i === 2 ? null : `+1212555${String(1000 + i).padStart(4, '0')}`,
      birthdate: i === 3 ? null : `19${rng.between(60, 99)}-0${rng.between(1, 9)}-1${rng.between(0, 9)}`,
      zipcode: i === 3 ? null : '10014',
      avatar: i === 2 ? null : `https://assets.svc-sim.example/avatars/${id}.png`,
      accountStatus: i === 3 ? 'payment_failed' : 'ok',
      createdAtMs,
      updatedAtMs: anchorMs - rng.between(0, 30) * DAY_MS,
      wallets: [
        wallet(rng, id, 'MEMBERSHIP', 0n, createdAtMs),
        wallet(rng, id, 'SPENDING', spending, createdAtMs),
      ],
      tags:
        i === 0
          ? [
              {
                type: 'industry',
                metadata: [{ key: 'restaurant_ids', value: [locations[0]?.id ?? ''] }],
                createdAtMs,
                updatedAtMs: createdAtMs,
              },
            ]
          : [],
      statuses:
        i === 1
          ? [status(rng, anchorMs - 400 * DAY_MS, 'expired', 2)]
          : [
              status(rng, anchorMs - 400 * DAY_MS, 'replaced', 3),
              status(rng, anchorMs, 'active', Math.min(7, 2 + i * 2)),
            ],
    };
    const history = memberCheckIns(rng, anchorMs, locations, i === 0 ? 45 : 12);
    members.push({ ...member, checkIns: history.visits, favouriteLocations: history.favourites });
  }
  return members;
}

export function generateApp(seed: number): AppRecord {
  const rng = createPrng(seed, 'app');
  return {
    merchantId: rng.uuid(),
    wallet: { id: rng.uuid(), balance: 250_000n * TOKEN + 123n, currency: 'svc' },
    clientId: rng.uuid(),
    clientSecret: `cs_test_${rng.alphanumeric(32)}`,
    redirectUris: ['http://127.0.0.1:8976/callback', 'http://localhost:8976/callback'],
    allowedScopes: ['read:profile', 'read:user_checkins', 'read:wallets', 'read:tags', 'read:memberships'],
  };
}

/** A member who joined at `nowMs`: both wallets, an active status, no tags, no visits yet. */
export function addMember(world: World, rng: Prng, nowMs: number): string {
  const id = rng.uuid();
  const first = rng.pick(FIRST_NAMES);
  const last = rng.pick(LAST_NAMES);
  const n = world.members.length;
  addMemberRecord(world, {
    id,
    firstName: first,
    lastName: last,
    email: `${first}.${last}${n}@example.com`.toLowerCase(),
    phoneNumber: `+1212555${String(1000 + n).padStart(4, '0')}`,
    birthdate: `19${rng.between(60, 99)}-0${rng.between(1, 9)}-1${rng.between(0, 9)}`,
    zipcode: '10011',
    avatar: null,
    accountStatus: 'ok',
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
    wallets: [
      wallet(rng, id, 'MEMBERSHIP', 0n, nowMs),
      wallet(rng, id, 'SPENDING', BigInt(rng.between(100, 1_000)) * TOKEN, nowMs),
    ],
    tags: [],
    statuses: [status(rng, nowMs, 'active', 1)],
    checkIns: [],
    favouriteLocations: [],
  });
  return id;
}
