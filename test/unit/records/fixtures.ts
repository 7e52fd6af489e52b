// Valid raw records shaped as in spec/partner-api.md. Each call returns a fresh object, so a test
// may mutate it.

export const IDS = {
  restaurant: '3f1c2a9e-7b4d-4c1a-9e2f-0a1b2c3d4e5f',
  location: 'a0b1c2d3-e4f5-4a6b-8c7d-9e0f1a2b3c4d',
  neighborhood: '11111111-2222-4333-8444-555555555555',
  checkIn: 'c0ffee00-1234-4abc-8def-0123456789ab',
  user: 'deadbeef-0000-4000-8000-000000000001',
  status: 'deadbeef-0000-4000-8000-000000000002',
  wallet: 'deadbeef-0000-4000-8000-000000000003',
  membership: 'deadbeef-0000-4000-8000-000000000004',
  tier: 'deadbeef-0000-4000-8000-000000000005',
  intent: 'feedface-0000-4000-8000-000000000006',
  payer: 'feedface-0000-4000-8000-000000000007',
  payee: 'feedface-0000-4000-8000-000000000008',
  challenge: 'feedface-0000-4000-8000-000000000009',
  balance: 'feedface-0000-4000-8000-00000000000a',
  owner: 'feedface-0000-4000-8000-00000000000b',
} as const;

const asset = () => ({
  preview_1x: 'https://img.example/r/1x.png?expires=1700000000',
  web_2x: 'https://img.example/r/2x.png?expires=1700000000',
  full_3x: 'https://img.example/r/3x.png?expires=1700000000',
});

export function listedRestaurant(): Record<string, unknown> {
  return {
    id: IDS.restaurant,
    object: 'restaurant',
    name: 'Noodle Bar',
    cuisine: ['ramen', 'japanese'],
    cohort: 'fsr',
    price: 2,
    tags: [{ anything: 'goes' }],
    asset: asset(),
    website_url: 'https://noodle.example',
    instagram_url: null,
    created_at: 1_700_000_000,
    updated_at: 1_700_003_600,
  };
}

export function embeddedFullRestaurant(): Record<string, unknown> {
  return {
    ...listedRestaurant(),
    created_at: '2023-11-14T22:13:20Z',
    updated_at: '2023-11-14T23:13:20.000Z',
  };
}

export function shortRestaurant(): Record<string, unknown> {
  return { id: IDS.restaurant, object: 'restaurant', name: 'Noodle Bar' };
}

export function neighborhood(): Record<string, unknown> {
  return { id: IDS.neighborhood, object: 'neighborhood', name: 'Mission', region: 'San Francisco' };
}

export function shortLocation(): Record<string, unknown> {
  return {
    id: IDS.location,
    object: 'location',
    name: 'Noodle Bar Mission',
    restaurant: shortRestaurant(),
    neighborhood: neighborhood(),
  };
}

export function reducedLocation(): Record<string, unknown> {
  return {
    ...shortLocation(),
    address: {
      street: '1 Valencia St',
      street2: '',
      city: 'San Francisco',
      state: 'CA',
      zipcode: '94103',
      country: 'US',
    },
    coordinate: { latitude: 37.77, longitude: -122.42 },
    time_zone: 'America/Los_Angeles',
    payments_enabled: true,
    is_club: false,
  };
}

export function fullLocation(): Record<string, unknown> {
  return {
    ...reducedLocation(),
    restaurant: embeddedFullRestaurant(),
    slug: 'noodle-bar-mission',
    phone_number: '+14155550100',
    reservation_url: null,
    reservations_enabled: false,
    google_place_id: 'ChIJ123',
    created_at: '2023-01-01T00:00:00Z',
    updated_at: '2023-06-01T12:00:00+02:00',
  };
}

export function feedCheckIn(): Record<string, unknown> {
  return {
    id: IDS.checkIn,
    object: 'check_in',
    location: fullLocation(),
    svc_pay_enabled: true,
    created_at: '2024-05-01T18:30:00.123Z',
    ended_at: null,
  };
}

export function shortFormCheckIn(): Record<string, unknown> {
  return { ...feedCheckIn(), location: shortLocation(), ended_at: '2024-05-01T20:00:00-07:00' };
}

export function user(): Record<string, unknown> {
  return {
    id: IDS.user,
    object: 'user',
    first_name: 'Ada',
    last_name: 'Lovelace',
    email: 'ada@example.com',
    phone_number: '+14155550101',
    birthdate: '1990-02-28',
    zipcode: null,
    avatar: null,
    account_status: 'ok',
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-02T00:00:00Z',
  };
}

export function memberStatus(): Record<string, unknown> {
  return {
    id: IDS.status,
    object: 'status',
    user: IDS.user,
    tier: 'Gold\nMember',
    level: 3,
    track: 'regular',
    token_multiplier: 2,
    state: 'active',
    benefits: [{ title: 'Free dessert', description: 'Once a month' }],
    progress: {
      check_ins: 4,
      check_in_threshold: 10,
      spend: { value: 12_345, currency: 'usd' },
      spend_threshold: { value: 50_000, currency: 'USD' },
      token_deposit: { value: '1000000000000000000', currency: 'TOKEN' },
      token_deposit_threshold: { value: '5000000000000000000', currency: 'token' },
    },
    year_start: 1_704_067_200,
    year_end: 1_735_689_599,
    started_at: '2024-01-01T00:00:00Z',
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
  };
}

export function userWallet(): Record<string, unknown> {
  return {
    id: IDS.wallet,
    object: 'user_wallet',
    wallet_type: 'SPENDING',
    address: '0xabc',
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
  };
}

export function userTag(): Record<string, unknown> {
  return {
    object: 'user_tag',
    type: 'industry',
    metadata: [{ key: 'restaurant', value: [IDS.restaurant] }],
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
  };
}

export function membership(): Record<string, unknown> {
  return {
    id: IDS.membership,
    object: 'membership',
    restaurant_id: IDS.restaurant,
    check_in_count: 7,
    last_check_in_date: '2024-04-30T19:00:00Z',
    membership_tier: {
      id: IDS.tier,
      object: 'membership_tier',
      name: 'VIP',
      artist: 'Someone',
      asset: asset(),
    },
  };
}

export function fullPaymentIntent(): Record<string, unknown> {
  return {
    id: IDS.intent,
    object: 'payment_intent',
    payer_account_balance_id: IDS.payer,
    payee_account_balance_id: IDS.payee,
    amount: { value: '123456789012345678901234567890', currency: 'TOKEN' },
    description: 'Dinner',
    status: 'pending',
    expires_at: '2024-05-01T19:00:00Z',
    canceled_at: null,
    paid_at: null,
    refunded_at: null,
    metadata: { order: '42' },
    created_at: '2024-05-01T18:00:00Z',
    updated_at: '2024-05-01T18:00:00Z',
  };
}

export function listPaymentIntent(): Record<string, unknown> {
  const { id, object, amount, description, status, created_at, updated_at } = fullPaymentIntent();
  return { id, object, amount, description, status, created_at, updated_at };
}

export function challenge(): Record<string, unknown> {
  return {
    id: IDS.challenge,
    object: 'challenge',
    type: 'PAYMENT',
    title: 'Spend 100',
    description: 'Spend and earn',
    image: null,
    threshold: {
      spend_threshold: { value: '100000000000000000000', currency: 'TOKEN' },
      minimum_spend: { value: '5', currency: 'Token' },
    },
    token_reward: { value: '18446744073709551617', currency: 'TOKEN' },
    start_time: '2024-01-01T00:00:00Z',
    end_time: null,
    terms: ['One per member'],
    accepted_currencies: ['USD', 'token'],
    created_at: '2024-01-01T00:00:00Z',
    updated_at: '2024-01-01T00:00:00Z',
  };
}

export function accountBalance(): Record<string, unknown> {
  return {
    id: IDS.balance,
    object: 'account_balance',
    owner_id: IDS.owner,
    owner_type: 'svc_merchant',
    balance: { value: '340282366920938463463374607431768211457', currency: 'TOKEN' },
    balance_usd: { value: 1999, currency: 'USD' },
  };
}

export function pagination(): Record<string, unknown> {
  return { total_count: 3, total_pages: 1, current_page: 0, next_page: null, page_size: 50 };
}
