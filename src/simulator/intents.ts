import { intentStatus } from './forms.js';
import type { Prng } from './prng.js';
import { addIntentRecord } from './world-index.js';
import { findWallet, type IntentRecord, type World } from './world.js';

/** Payment-intent transitions (spec: States and transitions), shared by the API routes and the control. */

export class IntentTransitionError extends Error {
  constructor(
    readonly code: 'payment0030' | 'paymentIntent0003',
    message: string,
  ) {
    super(message);
    this.name = 'IntentTransitionError';
  }
}

export interface CreateIntentInput {
  amount?: bigint | string;
  currency?: string;
  description?: string;
  metadata?: Record<string, string>;
  /** payer_account_balance_id: a member SPENDING wallet; default the default member's. */
  payer?: string;
  expiresAtMs?: number | null;
  idempotencyKey?: string | null;
}

export function createIntent(world: World, rng: Prng, nowMs: number, input: CreateIntentInput): IntentRecord {
  if (input.idempotencyKey) {
    for (const existing of world.intents.values())
      if (existing.idempotencyKey === input.idempotencyKey) return existing;
  }
  const payer = input.payer ?? world.members[0]?.wallets.find((w) => w.type === 'SPENDING')?.id ?? '';
  if (!findWallet(world, payer)) throw new RangeError(`unknown payer wallet ${payer}`);
  const amount = BigInt(input.amount ?? 10n ** 18n);
  if (amount <= 0n) throw new RangeError('amount must be positive');
  const intent: IntentRecord = {
    id: rng.uuid(),
    payerWalletId: payer,
    payeeWalletId: world.app.wallet.id,
    amount,
    currency: input.currency ?? 'SVC',
    description: input.description ?? 'Simulated charge',
    metadata: input.metadata ?? {},
    expiresAtMs: input.expiresAtMs === undefined ? nowMs + 24 * 3_600_000 : input.expiresAtMs,
    canceledAtMs: null,
    paidAtMs: null,
    refundedAtMs: null,
    createdAtMs: nowMs,
    updatedAtMs: nowMs,
    idempotencyKey: input.idempotencyKey ?? null,
  };
  addIntentRecord(world, intent);
  world.truth.record('intent', intent.id, nowMs);
  scheduleExpiryTruth(world, intent);
  return intent;
}

/**
 * Status is derived at read time, so a pending intent turns `canceled` the moment its expires_at
 * passes with nothing written: the timeline logs that moment in the truth, if it still applies then.
 */
export function scheduleExpiryTruth(world: World, intent: IntentRecord): void {
  const expiresAtMs = intent.expiresAtMs;
  if (expiresAtMs === null || expiresAtMs <= world.timeline.appliedUntilMs()) return;
  if (intent.paidAtMs !== null || intent.canceledAtMs !== null) return;
  world.timeline.schedule(expiresAtMs, (atMs) => {
    if (intent.expiresAtMs === atMs && intent.paidAtMs === null && intent.canceledAtMs === null)
      world.truth.record('intent', intent.id, atMs);
  });
}

export function confirmIntent(world: World, intent: IntentRecord, nowMs: number): IntentRecord {
  if (intentStatus(intent, nowMs) !== 'pending')
    throw new IntentTransitionError(
      'paymentIntent0003',
      'This payment intent cannot be confirmed in its current state.',
    );
  const payer = findWallet(world, intent.payerWalletId);
  if (!payer || payer.balance < intent.amount)
    throw new IntentTransitionError('payment0030', 'Insufficient tokens in the spending wallet.');
  // The wallet record (id, type, address) does not change with its balance: wallets are provisioned once.
  payer.balance -= intent.amount;
  world.app.wallet.balance += intent.amount;
  intent.paidAtMs = nowMs;
  intent.updatedAtMs = nowMs;
  world.truth.record('intent', intent.id, nowMs);
  return intent;
}

/** Repeated cancel of a canceled intent returns it unchanged (no side effects). */
export function cancelIntent(world: World, intent: IntentRecord, nowMs: number): IntentRecord {
  const status = intentStatus(intent, nowMs);
  if (status === 'canceled') return intent;
  if (status !== 'pending')
    throw new IntentTransitionError(
      'paymentIntent0003',
      'This payment intent cannot be canceled in its current state.',
    );
  intent.canceledAtMs = nowMs;
  intent.updatedAtMs = nowMs;
  world.truth.record('intent', intent.id, nowMs);
  return intent;
}

/** Decision: a refund reverses the full amount of a paid intent; only paid intents are refundable. */
export function refundIntent(world: World, intent: IntentRecord, nowMs: number): IntentRecord {
  if (intentStatus(intent, nowMs) !== 'paid')
    throw new IntentTransitionError('paymentIntent0003', 'Only a paid payment intent can be refunded.');
  const payer = findWallet(world, intent.payerWalletId);
  if (payer) payer.balance += intent.amount;
  world.app.wallet.balance -= intent.amount;
  intent.refundedAtMs = nowMs;
  intent.updatedAtMs = nowMs;
  world.truth.record('intent', intent.id, nowMs);
  return intent;
}

/** Moves expires_at to now, so a pending intent reads as canceled from now on. */
export function expireIntent(world: World, intent: IntentRecord, nowMs: number): IntentRecord {
  if (intentStatus(intent, nowMs) !== 'pending')
    throw new IntentTransitionError('paymentIntent0003', 'Only a pending payment intent can expire.');
  intent.expiresAtMs = nowMs;
  intent.updatedAtMs = nowMs;
  world.truth.record('intent', intent.id, nowMs);
  return intent;
}
