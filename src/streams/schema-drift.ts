import type { DriftCount } from '../records/schema-drift.js';
import { protectPii } from '../sync/member-pii.js';
import { unfenced } from '../leases/fenced-database.js';
import { recordSchemaDrift } from '../warehouse/schema-drift.js';
import { deliverAlertsSoon } from '../alerts/delivery.js';
import type { StreamDeps } from './stream.js';

/**
 * Records the drift a page or a pass of `resource` showed (docs/schema-drift.md): one statement per
 * call, nothing at all when there is none (the common case). New drift is logged once, raises its
 * `schema.drift` event when ALERT_EVENTS lists it, and that event is sent at once in the
 * background (the alerts pass retries it). `member`: the resource holds a member's data, so stored
 * examples follow MEMBER_PII — every field's, since a field the parser does not know could be
 * personal too.
 *
 * Written outside any lease and the page's transaction: drift is an observation of the API, not a
 * part of the page, and recording it twice only adds to its count.
 */
export async function noteSchemaDrift(
  deps: StreamDeps<unknown>,
  resource: string,
  counts: readonly DriftCount[] | undefined,
  options: { member?: boolean } = {},
): Promise<void> {
  if (counts === undefined || counts.length === 0) return;
  for (const one of counts) deps.metrics.schemaDriftRecords.inc({ resource, change: one.change }, one.count);
  const fresh = await recordSchemaDrift(unfenced(deps.db), {
    resource,
    counts,
    raiseEvent: deps.config.alerts.events.has('schema.drift'),
    ...(options.member === true ? { protectExample: memberExampleProtection(deps) } : {}),
  });
  if (fresh.length === 0) return;
  const log = deps.logger.child({ resource });
  for (const drift of fresh) {
    log.warn(
      { fieldPath: drift.fieldPath, change: drift.change, records: drift.count, alertId: drift.alertId },
      `schema drift: ${resource} ${drift.fieldPath} ${drift.change.replace('_', ' ')}`,
    );
  }
  const alertIds = fresh.flatMap((drift) => (drift.alertId === null ? [] : [drift.alertId]));
  if (alertIds.length > 0) deliverAlertsSoon(deps, alertIds);
}

/** MEMBER_PII applied to an example's JSON text: as is, keyed HMAC, or nothing. */
function memberExampleProtection(deps: StreamDeps<unknown>): (jsonText: string) => string | null {
  const mode = deps.config.members.pii;
  if (mode === 'store') return (text) => text;
  const key = deps.config.oauth?.encryptionKey.reveal();
  // Without a key nothing can be hashed: store no example rather than the value.
  if (key === undefined) return () => null;
  return (text) => protectPii(text, mode, key);
}
