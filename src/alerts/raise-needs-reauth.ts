import { recordAlertEvent } from './alert-store.js';
import type { Executor } from '../warehouse/database.js';

/**
 * The `member.needs_reauth` event of one connection (docs/payment-intents.md, "Events"): one per
 * grant, so its subject is the member and the moment the grant was made; a member who connects
 * again and loses that grant too raises a new one. The body names the member by id only, nothing
 * personal; `members forget` removes it with the rest of the member.
 */
export async function recordNeedsReauthEvent(
  db: Executor,
  connection: { memberId: string; connectedAt: Date },
  at: Date,
): Promise<string | null> {
  const connectedAt = connection.connectedAt.toISOString();
  return recordAlertEvent(db, {
    type: 'member.needs_reauth',
    subject: `${connection.memberId}:${connectedAt}`,
    payload: {
      member_id: connection.memberId,
      connected_at: connectedAt,
      status: 'needs_reauth',
      action: 'rewards-etl members connect',
    },
    at,
  });
}
