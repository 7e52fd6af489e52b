import { createHash } from 'node:crypto';
import { sql } from 'kysely';
import { storablePayloadJson, storableText } from '../records/storable.js';
import type { Executor } from './database.js';

export interface Rejection {
  recordId: string | null;
  reason: string;
  payload: unknown;
  /** The member the record belongs to (members stream): what `members forget` deletes by. */
  memberId?: string;
}

/**
 * Stores records that failed validation: never silently dropped. Whatever the record held, its row
 * is storable (see storablePayloadJson): a rejection never fails the page it came with. Seeing the same bad record again
 * (a window re-paged, a snapshot re-read) bumps its count instead of adding a row. One statement.
 */
export async function storeRejections(
  db: Executor,
  stream: string,
  rejections: readonly Rejection[],
  seenAt: Date,
): Promise<void> {
  if (rejections.length === 0) return;
  const byHash = new Map<string, Rejection>();
  for (const rejection of rejections) byHash.set(payloadHash(rejection), rejection);
  const rows = [...byHash.entries()].map(([hash, rejection]) => ({
    stream,
    record_id: rejection.recordId === null ? null : storableText(rejection.recordId),
    reason: storableText(rejection.reason),
    payload: storablePayloadJson(rejection.payload),
    payload_hash: hash,
    member_id: rejection.memberId ?? null,
    seen_at: seenAt,
    last_seen_at: seenAt,
  }));
  await db
    .insertInto('rewards.rejected_records')
    .values(rows)
    .onConflict((conflict) =>
      conflict.columns(['stream', 'payload_hash']).doUpdateSet({
        last_seen_at: (eb) => eb.ref('excluded.last_seen_at'),
        times_seen: sql`rewards.rejected_records.times_seen + 1`,
        reason: (eb) => eb.ref('excluded.reason'),
      }),
    )
    .execute();
}

function payloadHash(rejection: Rejection): string {
  return createHash('sha256')
    .update(storablePayloadJson(rejection.payload))
    .update('\0')
    .update(rejection.reason)
    .update(rejection.memberId === undefined ? '' : `\0${rejection.memberId}`)
    .digest('hex');
}
