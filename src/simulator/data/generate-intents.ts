import { createPrng } from '../prng.js';
import type { AppRecord, IntentRecord, MemberRecord } from '../world.js';

const DAY_MS = 86_400_000;
const TOKEN = 10n ** 18n;

type GeneratedState = 'pending' | 'paid' | 'canceled' | 'refunded' | 'expired';

/** The fixture's eight intents, oldest first: every state, three pending. */
const FIXTURE_STATES: readonly GeneratedState[] = [
  'pending',
  'paid',
  'canceled',
  'refunded',
  'expired',
  'pending',
  'paid',
  'pending',
];

/**
 * Intents payable to the app wallet, in creation order. Without `openIntents`: the fixture's eight.
 * With it: one settled intent of each kind, then exactly that many pending intents created in the
 * last four hours by members across the world, each expiring 24 hours after creation.
 */
export function generateIntents(
  seed: number,
  anchorMs: number,
  members: MemberRecord[],
  app: AppRecord,
  openIntents: number | null = null,
): IntentRecord[] {
  return openIntents === null
    ? fixtureIntents(seed, anchorMs, members, app)
    : sizedIntents(seed, anchorMs, members, app, openIntents);
}

function fixtureIntents(
  seed: number,
  anchorMs: number,
  members: MemberRecord[],
  app: AppRecord,
): IntentRecord[] {
  const rng = createPrng(seed, 'intents');
  return FIXTURE_STATES.map((state, i) => {
    const payer = members[i % 2 === 0 ? 0 : 2]?.wallets.find((w) => w.type === 'SPENDING');
    const createdAtMs = anchorMs - (FIXTURE_STATES.length - i) * 3_600_000;
    return intent(rng.uuid(), state, createdAtMs, payer?.id ?? '', app, i, {
      amount: BigInt(rng.between(1, 90)) * TOKEN + BigInt(rng.between(0, 999)),
      expiresAtMs: state === 'expired' ? createdAtMs + 15 * 60_000 : createdAtMs + 30 * DAY_MS,
    });
  });
}

function sizedIntents(
  seed: number,
  anchorMs: number,
  members: MemberRecord[],
  app: AppRecord,
  openIntents: number,
): IntentRecord[] {
  const rng = createPrng(seed, 'intents:sized');
  // Member 1 is nearly out of tokens (the payment0030 fixture): the others pay.
  const payers = members.filter((_, i) => i !== 1);
  const spending = (m: MemberRecord | undefined): string =>
    m?.wallets.find((w) => w.type === 'SPENDING')?.id ?? '';
  const settled: GeneratedState[] = ['paid', 'canceled', 'refunded', 'expired'];
  const planned = [
    ...settled.map((state, i) => ({ state, createdAtMs: anchorMs - (30 - i) * 3_600_000 })),
    ...Array.from({ length: openIntents }, () => ({
      state: 'pending' as const,
      createdAtMs: anchorMs - rng.between(1, 4 * 3_600) * 1_000,
    })),
  ].sort((a, b) => a.createdAtMs - b.createdAtMs);
  return planned.map(({ state, createdAtMs }, i) =>
    intent(rng.uuid(), state, createdAtMs, spending(rng.pick(payers)), app, i, {
      amount: BigInt(rng.between(1, 90)) * TOKEN + BigInt(rng.between(0, 999)),
      expiresAtMs: state === 'expired' ? createdAtMs + 15 * 60_000 : createdAtMs + DAY_MS,
    }),
  );
}

function intent(
  id: string,
  state: GeneratedState,
  createdAtMs: number,
  payerWalletId: string,
  app: AppRecord,
  i: number,
  drawn: { amount: bigint; expiresAtMs: number },
): IntentRecord {
  const later = createdAtMs + 5 * 60_000;
  return {
    id,
    payerWalletId,
    payeeWalletId: app.wallet.id,
    amount: drawn.amount,
    currency: 'SVC',
    description: `Order #${1000 + i}`,
    metadata: { order_id: String(1000 + i) },
    expiresAtMs: drawn.expiresAtMs,
    canceledAtMs: state === 'canceled' ? later : null,
    paidAtMs: state === 'paid' || state === 'refunded' ? later : null,
    refundedAtMs: state === 'refunded' ? later + 60_000 : null,
    createdAtMs,
    updatedAtMs: state === 'pending' || state === 'expired' ? createdAtMs : later,
    idempotencyKey: null,
  };
}
