import { intentStatus } from '../forms.js';
import {
  cancelIntent,
  confirmIntent,
  createIntent,
  IntentTransitionError,
  refundIntent,
} from '../intents.js';
import type { Prng } from '../prng.js';
import type { IntentRecord, MemberRecord } from '../world.js';
import type { ChangeContext } from './change-context.js';
import type { ChangeSettings } from './change-settings.js';
import { exponentialMs } from './rhythmic-arrivals.js';

const HOUR = 3_600_000;
const TOKEN = 10n ** 18n;
/** What createIntent gives an intent when nothing else is said. */
const EXPIRES_AFTER_MS = 24 * HOUR;

/**
 * Mean time an intent stays pending: paid or canceled after `intentOpenMs` on average, or left to
 * expire after 24 hours. With `intentsPerHour` null, intents arrive at open ÷ that mean per hour, so
 * the world keeps about as many open intents as it started with (Little's law).
 */
export function intentsPerHour(settings: ChangeSettings, openAtStart: number): number {
  if (settings.intentsPerHour !== null) return settings.intentsPerHour;
  const settled = settings.intentPaidShare + settings.intentCanceledShare;
  const meanOpenMs = settled * settings.intentOpenMs + (1 - settled) * EXPIRES_AFTER_MS;
  return meanOpenMs > 0 ? (openAtStart * HOUR) / meanOpenMs : 0;
}

/**
 * Members' payments: intents created at a steady rate by members across the world (never member 1,
 * the nearly-empty wallet of the fixture), each then paid, canceled or left to expire; a few paid
 * ones are refunded later. A payment that finds the wallet short is canceled instead.
 */
export function startIntentChanges(ctx: ChangeContext): { intentsPerHour: number } {
  const { world, settings, startMs } = ctx;
  const rng = ctx.rng('intents');
  const open = [...world.intents.values()].filter((i) => intentStatus(i, startMs) === 'pending');
  for (const intent of open) planOutcome(ctx, rng, intent, startMs);
  const perHour = intentsPerHour(settings, open.length);
  const payers = world.members.filter((_, i) => i !== 1);
  if (perHour <= 0 || payers.length === 0) return { intentsPerHour: 0 };
  const next = (fromMs: number): void =>
    ctx.schedule(fromMs + exponentialMs(rng, HOUR / perHour), (atMs) => {
      const intent = createIntent(world, rng, atMs, {
        amount: BigInt(rng.between(1, 90)) * TOKEN + BigInt(rng.between(0, 999)),
        payer: spendingWallet(rng.pick(payers)),
        description: `Order #${world.intents.size + 1000}`,
        metadata: { order_id: String(world.intents.size + 1000) },
        expiresAtMs: atMs + EXPIRES_AFTER_MS,
      });
      ctx.count('intentCreated');
      planOutcome(ctx, rng, intent, atMs);
      next(atMs);
    });
  next(startMs);
  return { intentsPerHour: perHour };
}

function spendingWallet(member: MemberRecord): string {
  return member.wallets.find((w) => w.type === 'SPENDING')?.id ?? '';
}

function planOutcome(ctx: ChangeContext, rng: Prng, intent: IntentRecord, fromMs: number): void {
  const { settings, world } = ctx;
  const u = rng.next();
  const wait = exponentialMs(rng, settings.intentOpenMs);
  if (u < settings.intentPaidShare) {
    ctx.schedule(fromMs + wait, (atMs) => {
      if (intentStatus(intent, atMs) !== 'pending') return; // settled meanwhile, or expired
      try {
        confirmIntent(world, intent, atMs);
        ctx.count('intentPaid');
        if (rng.chance(settings.refundShare)) planRefund(ctx, rng, intent, atMs);
      } catch (error) {
        if (!(error instanceof IntentTransitionError)) throw error;
        cancelIntent(world, intent, atMs); // payment0030: the member paid another way
        ctx.count('intentCanceled');
      }
    });
  } else if (u < settings.intentPaidShare + settings.intentCanceledShare) {
    ctx.schedule(fromMs + wait, (atMs) => {
      if (intentStatus(intent, atMs) !== 'pending') return;
      cancelIntent(world, intent, atMs);
      ctx.count('intentCanceled');
    });
  }
}

function planRefund(ctx: ChangeContext, rng: Prng, intent: IntentRecord, fromMs: number): void {
  ctx.schedule(fromMs + exponentialMs(rng, ctx.settings.refundAfterMs), (atMs) => {
    if (intentStatus(intent, atMs) !== 'paid') return;
    refundIntent(ctx.world, intent, atMs);
    ctx.count('intentRefunded');
  });
}
