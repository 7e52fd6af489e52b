import type { PartnerApi } from '../api/partner-api.js';
import { driftOf } from '../records/parse.js';
import { driftCounts } from '../records/schema-drift.js';
import { insertBalanceSnapshot } from '../warehouse/balance.js';
import { storeRejections } from '../warehouse/rejected-records.js';
import { STREAM_NAME } from '../sync/stream-facts.js';
import { noteSchemaDrift } from './schema-drift.js';
import type { PassOutcome, StreamDeps } from './stream.js';

export { currentAppWalletId } from '../warehouse/balance.js';

const STREAM = STREAM_NAME.balance;

/** `GET /balance` -> one balance_snapshots row, amounts exact. API errors are thrown (the job retries). */
export async function runBalancePass(deps: StreamDeps<PartnerApi>): Promise<PassOutcome> {
  const { db, api, clock, metrics, signal } = deps;
  const result = await api.getBalance({ signal });
  const observedAt = clock.now();
  // Its unknown fields go in `extra`; what it added, lacked or retyped is recorded (docs/schema-drift.md).
  await noteSchemaDrift(deps, 'balance', driftCounts(driftOf(result)));
  if (!result.ok) {
    await storeRejections(db, STREAM, [result.rejection], observedAt);
    metrics.recordsRejected.inc({ stream: STREAM });
    return {
      status: 'failed',
      rows: 0,
      requests: 1,
      error: `the balance failed validation: ${result.rejection.reason}`,
      details: { rejected: 1 },
    };
  }
  const balance = result.record;
  const inserted = await insertBalanceSnapshot(db, balance, observedAt);
  metrics.rowsIngested.inc({ stream: STREAM }, inserted ? 1 : 0);
  return {
    status: 'succeeded',
    rows: inserted ? 1 : 0,
    requests: 1,
    details: {
      accountBalanceId: balance.id,
      balance: balance.balance.value,
      currency: balance.balance.currency,
      balanceUsdCents: balance.balanceUsd.value,
    },
  };
}
