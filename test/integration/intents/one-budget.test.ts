import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PartnerApi } from '../../../src/api/partner-api.js';
import { createSpendLedger } from '../../../src/api/spend-ledger.js';
import { runPaymentIntentsPass } from '../../../src/streams/payment-intents/pass.js';
import type { StreamDeps } from '../../../src/streams/stream.js';
import { createIntentHarness, type IntentHarness } from './harness.js';

// One budget across streams (docs/rate-limit.md): an intents tick plans within the intents'
// allowance of the limit, not within INTENT_POLL_SHARE alone. Idle others leave it the rest of the
// limit; a feed that consumed the limit leaves it its share, no less.

// 200 rps over a 1 s pass interval: 200 requests; INTENT_POLL_SHARE 0.01 keeps intents 2 of them.
const ENV = { PAYMENT_INTENTS_EVERY: '1s', INTENT_POLL_SHARE: '0.01' };
const SHARE_BUDGET = 2;
let h: IntentHarness;
let deps: StreamDeps<PartnerApi>;

beforeAll(async () => {
  h = await createIntentHarness('intents-budget');
  deps = await h.deps({ env: ENV });
  await h.knowAppWallet();
});
afterAll(async () => {
  await h?.close();
});

describe('payment intents within the one budget', () => {
  it('plan beyond INTENT_POLL_SHARE when the other streams are idle', async () => {
    const outcome = await runPaymentIntentsPass(deps);
    expect(outcome.status).toBe('succeeded');
    expect(Number(outcome.details?.['budget'])).toBeGreaterThan(SHARE_BUDGET);
  });

  it('keep their share, and no more, when the feed consumed the limit', async () => {
    const ledger = createSpendLedger({ redis: deps.redis, prefix: deps.config.redisPrefix });
    // The feed's spend over the last minute, at the whole limit (200 rps).
    await ledger.record('checkins', 200 * 60);
    const outcome = await runPaymentIntentsPass(deps);
    expect(outcome.details?.['budget']).toBe(SHARE_BUDGET);
  });
});
