import type { CheckInRow } from './check-in-store.js';
import { createPrng } from './prng.js';
import type {
  ChallengeRecord,
  IntentRecord,
  LocationRecord,
  MemberCheckIn,
  MemberRecord,
  RestaurantRecord,
  StatusRecord,
  World,
} from './world.js';
import { TIER_NAMES, ARTISTS } from './data/catalog.js';

/** JSON shapes exactly as the partner API shows them (see docs/partner-api.md). */

const iso = (ms: number): string => new Date(ms).toISOString();
const isoOrNull = (ms: number | null): string | null => (ms === null ? null : iso(ms));
const epochSeconds = (ms: number): number => Math.floor(ms / 1000);

/** The restaurant list is the one place with epoch-second timestamps. */
export function restaurantListForm(r: RestaurantRecord): Record<string, unknown> {
  return {
    ...restaurantBody(r),
    created_at: epochSeconds(r.createdAtMs),
    updated_at: epochSeconds(r.updatedAtMs),
  };
}

export function restaurantEmbeddedForm(r: RestaurantRecord): Record<string, unknown> {
  return { ...restaurantBody(r), created_at: iso(r.createdAtMs), updated_at: iso(r.updatedAtMs) };
}

function restaurantBody(r: RestaurantRecord): Record<string, unknown> {
  return {
    id: r.id,
    object: 'restaurant',
    name: r.name,
    cuisine: r.cuisine,
    cohort: r.cohort,
    price: r.price,
    tags: r.tags,
    asset: r.asset,
    website_url: r.websiteUrl,
    instagram_url: r.instagramUrl,
  };
}

export function restaurantShortForm(r: RestaurantRecord): Record<string, unknown> {
  return { id: r.id, object: 'restaurant', name: r.name };
}

function neighborhoodForm(world: World, l: LocationRecord): Record<string, unknown> {
  const n = world.neighborhoods[l.neighborhoodIndex];
  return { id: n?.id, object: 'neighborhood', name: n?.name, region: n?.region };
}

function restaurantOf(world: World, l: LocationRecord): RestaurantRecord {
  const r = world.restaurants[l.restaurantIndex];
  if (!r) throw new Error(`location ${l.id} has no restaurant`);
  return r;
}

/** Full form: the venue feed. */
export function locationFullForm(world: World, l: LocationRecord): Record<string, unknown> {
  return {
    id: l.id,
    object: 'location',
    name: l.name,
    restaurant: restaurantEmbeddedForm(restaurantOf(world, l)),
    neighborhood: neighborhoodForm(world, l),
    slug: l.slug,
    address: l.address,
    coordinate: l.coordinate,
    phone_number: l.phoneNumber,
    time_zone: l.timeZone,
    payments_enabled: l.paymentsEnabled,
    is_club: l.isClub,
    reservation_url: l.reservationUrl,
    reservations_enabled: l.reservationsEnabled,
    google_place_id: l.googlePlaceId,
    created_at: iso(l.createdAtMs),
    updated_at: iso(l.updatedAtMs),
  };
}

/** Reduced form: GET /locations/{id}. */
export function locationReducedForm(world: World, l: LocationRecord): Record<string, unknown> {
  return {
    id: l.id,
    object: 'location',
    name: l.name,
    restaurant: restaurantShortForm(restaurantOf(world, l)),
    neighborhood: neighborhoodForm(world, l),
    address: l.address,
    coordinate: l.coordinate,
    time_zone: l.timeZone,
    payments_enabled: l.paymentsEnabled,
    is_club: l.isClub,
  };
}

/** Short form: member history and GET /check_ins/{id}. */
export function locationShortForm(world: World, l: LocationRecord): Record<string, unknown> {
  return {
    id: l.id,
    object: 'location',
    name: l.name,
    restaurant: restaurantShortForm(restaurantOf(world, l)),
    neighborhood: neighborhoodForm(world, l),
  };
}

export function checkInForm(
  world: World,
  row: CheckInRow | MemberCheckIn,
  id: string,
  form: 'full' | 'short',
): Record<string, unknown> {
  const location = world.locations[row.locationIndex];
  if (!location) throw new Error('check-in location missing');
  const createdAtMs = 'seq' in row ? row.createdAtMs : row.createdAtMs;
  return {
    id,
    object: 'check_in',
    location: form === 'full' ? locationFullForm(world, location) : locationShortForm(world, location),
    svc_pay_enabled: row.svcPayEnabled,
    created_at: iso(createdAtMs),
    ended_at: isoOrNull(row.endedAtMs),
  };
}

export function userForm(m: MemberRecord): Record<string, unknown> {
  return {
    id: m.id,
    object: 'user',
    first_name: m.firstName,
    last_name: m.lastName,
    email: m.email,
    phone_number: m.phoneNumber,
    birthdate: m.birthdate,
    zipcode: m.zipcode,
    avatar: m.avatar,
    account_status: m.accountStatus,
    created_at: iso(m.createdAtMs),
    updated_at: iso(m.updatedAtMs),
  };
}

export function statusForm(m: MemberRecord, s: StatusRecord): Record<string, unknown> {
  return {
    id: s.id,
    object: 'status',
    user: m.id,
    tier: s.tier,
    level: s.level,
    track: s.track,
    token_multiplier: s.tokenMultiplier,
    state: s.state,
    benefits: s.benefits,
    progress: {
      check_ins: s.progress.checkIns,
      check_in_threshold: s.progress.checkInThreshold,
      spend: { value: s.progress.spendCents, currency: 'usd' },
      spend_threshold: { value: s.progress.spendThresholdCents, currency: 'usd' },
      token_deposit: { value: s.progress.tokenDeposit.toString(), currency: 'svc' },
      token_deposit_threshold: { value: s.progress.tokenDepositThreshold.toString(), currency: 'svc' },
    },
    year_start: epochSeconds(s.yearStartMs),
    year_end: epochSeconds(s.yearEndMs),
    started_at: iso(s.startedAtMs),
    created_at: iso(s.createdAtMs),
    updated_at: iso(s.updatedAtMs),
  };
}

export function walletForm(m: MemberRecord): Record<string, unknown>[] {
  return m.wallets.map((w) => ({
    id: w.id,
    object: 'user_wallet',
    wallet_type: w.type,
    address: w.address,
    created_at: iso(w.createdAtMs),
    updated_at: iso(w.updatedAtMs),
  }));
}

export function tagForms(m: MemberRecord): Record<string, unknown>[] {
  return m.tags.map((t) => ({
    object: 'user_tag',
    type: t.type,
    metadata: t.metadata,
    created_at: iso(t.createdAtMs),
    updated_at: iso(t.updatedAtMs),
  }));
}

/** One membership per restaurant the member visited, derived from the member's check-ins. */
export function membershipForms(world: World, m: MemberRecord): Record<string, unknown>[] {
  const byRestaurant = new Map<string, { count: number; last: number }>();
  for (const visit of m.checkIns) {
    const location = world.locations[visit.locationIndex];
    const restaurant = location ? world.restaurants[location.restaurantIndex] : undefined;
    if (!restaurant) continue;
    const entry = byRestaurant.get(restaurant.id) ?? { count: 0, last: 0 };
    entry.count++;
    entry.last = Math.max(entry.last, visit.createdAtMs);
    byRestaurant.set(restaurant.id, entry);
  }
  return [...byRestaurant.entries()].map(([restaurantId, entry]) => {
    const rng = createPrng(world.seed, `membership:${m.id}:${restaurantId}`);
    const tierName = TIER_NAMES[entry.count >= 10 ? 2 : entry.count >= 3 ? 1 : 0];
    const tierRng = createPrng(world.seed, `tier:${tierName}`);
    const tierId = tierRng.uuid();
    return {
      id: rng.uuid(),
      object: 'membership',
      restaurant_id: restaurantId,
      check_in_count: entry.count,
      last_check_in_date: entry.count > 0 ? iso(entry.last) : null,
      membership_tier: {
        id: tierId,
        object: 'membership_tier',
        name: tierName,
        artist: tierRng.pick(ARTISTS),
        asset: {
          preview_1x: `https://assets.svc-sim.example/tiers/${tierId}/preview_1x.png`,
          web_2x: `https://assets.svc-sim.example/tiers/${tierId}/web_2x.png`,
          full_3x: `https://assets.svc-sim.example/tiers/${tierId}/full_3x.png`,
        },
      },
    };
  });
}

/**
 * Status is computed at read time from the timestamps. Decision: a pending intent whose expires_at
 * has passed reads as `canceled` (canceled_at stays null; expires_at explains it).
 */
export function intentStatus(i: IntentRecord, nowMs: number): 'pending' | 'paid' | 'canceled' | 'refunded' {
  if (i.refundedAtMs !== null) return 'refunded';
  if (i.paidAtMs !== null) return 'paid';
  if (i.canceledAtMs !== null) return 'canceled';
  if (i.expiresAtMs !== null && i.expiresAtMs <= nowMs) return 'canceled';
  return 'pending';
}

const amountForm = (i: IntentRecord): { value: string; currency: string } => ({
  value: i.amount.toString(),
  currency: i.currency,
});

export function intentFullForm(i: IntentRecord, nowMs: number): Record<string, unknown> {
  return {
    id: i.id,
    object: 'payment_intent',
    payer_account_balance_id: i.payerWalletId,
    payee_account_balance_id: i.payeeWalletId,
    amount: amountForm(i),
    description: i.description,
    status: intentStatus(i, nowMs),
    expires_at: isoOrNull(i.expiresAtMs),
    canceled_at: isoOrNull(i.canceledAtMs),
    paid_at: isoOrNull(i.paidAtMs),
    refunded_at: isoOrNull(i.refundedAtMs),
    metadata: i.metadata,
    created_at: iso(i.createdAtMs),
    updated_at: iso(i.updatedAtMs),
  };
}

export function intentListForm(i: IntentRecord, nowMs: number): Record<string, unknown> {
  return {
    id: i.id,
    object: 'payment_intent',
    amount: amountForm(i),
    description: i.description,
    status: intentStatus(i, nowMs),
    created_at: iso(i.createdAtMs),
    updated_at: iso(i.updatedAtMs),
  };
}

export function intentActionForm(
  i: IntentRecord,
  nowMs: number,
  action: 'confirm' | 'cancel',
): Record<string, unknown> {
  const base = { id: i.id, object: 'payment_intent', status: intentStatus(i, nowMs) };
  return action === 'confirm'
    ? { ...base, paid_at: isoOrNull(i.paidAtMs), amount: amountForm(i) }
    : { ...base, canceled_at: isoOrNull(i.canceledAtMs), amount: amountForm(i) };
}

export function challengeForm(c: ChallengeRecord): Record<string, unknown> {
  return {
    id: c.id,
    object: 'challenge',
    type: c.type,
    title: c.title,
    description: c.description,
    image: c.image,
    threshold: c.threshold,
    token_reward: c.tokenReward,
    start_time: isoOrNull(c.startTimeMs),
    end_time: isoOrNull(c.endTimeMs),
    terms: c.terms,
    accepted_currencies: c.acceptedCurrencies,
    created_at: iso(c.createdAtMs),
    updated_at: iso(c.updatedAtMs),
  };
}

/** USD value of the app wallet: a fixed simulated rate of 1 token = 2 US cents. */
export function balanceForm(world: World): Record<string, unknown> {
  const cents = (world.app.wallet.balance * 2n) / 10n ** 18n;
  return {
    id: world.app.wallet.id,
    object: 'account_balance',
    owner_id: world.app.merchantId,
    owner_type: 'svc_merchant',
    balance: { value: world.app.wallet.balance.toString(), currency: world.app.wallet.currency },
    balance_usd: { value: Number(cents), currency: 'USD' },
  };
}
