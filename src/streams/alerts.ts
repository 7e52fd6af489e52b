import { serializeAlertBody } from '../alerts/alert-body.js';
import pMap from 'p-map';
import {
  afterFailedAttempt,
  DEFAULT_ALERT_DELIVERY_POLICY,
  type AlertDeliveryPolicy,
} from '../alerts/delivery-policy.js';
import { alertRequestHeaders } from '../alerts/sign-alert.js';
import { postAlert } from '../alerts/webhook-sender.js';
import {
  claimDueAlerts,
  countAlertBacklog,
  markAlertAttemptFailed,
  markAlertDelivered,
  noteUndeliverableAlerts,
  type ClaimedAlert,
} from '../warehouse/alerts.js';
import type { PassOutcome, StreamDeps } from './stream.js';

const NO_WEBHOOK = 'not delivered: ALERT_WEBHOOK_URL is not set';
const NO_SECRET = 'not delivered: ALERT_WEBHOOK_SECRET is not set (alerts are only sent signed)';

/** Upper bound of alerts one pass handles, so a huge backlog does not hold the stream lock forever. */
const MAX_ALERTS_PER_PASS = 5_000;

/**
 * POSTs due, undelivered alerts to ALERT_WEBHOOK_URL, signed (docs/payment-intents.md, "Delivery"). At least once:
 * a 2xx marks the alert delivered; anything else schedules a retry with exponential backoff, and after
 * `maxAttempts` attempts or `maxAgeMs` the alert is marked failed. Without a webhook (or secret) the
 * alerts stay recorded and undelivered, each logged once.
 */
export async function runAlertsPass(
  deps: StreamDeps<unknown>,
  policy: AlertDeliveryPolicy = DEFAULT_ALERT_DELIVERY_POLICY,
): Promise<PassOutcome> {
  const { db, config, logger, clock } = deps;
  const log = logger.child({ stream: 'alerts' });
  const url = config.alerts.webhookUrl;
  const secret = config.alerts.webhookSecret;

  if (url === undefined || secret === undefined) {
    const reason = url === undefined ? NO_WEBHOOK : NO_SECRET;
    const noted = await noteUndeliverableAlerts(db, reason, MAX_ALERTS_PER_PASS);
    for (const alert of noted) {
      log.warn({ alertId: alert.id, paymentIntentId: alert.paymentIntentId }, `alert recorded but ${reason}`);
    }
    const backlog = await refreshGauges(deps);
    return {
      status: 'succeeded',
      rows: 0,
      details: { webhook: 'not configured', noted: noted.length, ...backlog },
    };
  }

  const webhook = { url, secret: secret.reveal(), maxReplyBytes: config.alerts.maxReplyBytes };
  const tally: DeliveryTally = { delivered: 0, failedAttempts: 0, gaveUp: 0 };
  let handled = 0;
  while (handled < MAX_ALERTS_PER_PASS && deps.signal?.aborted !== true) {
    const batch = await claimDueAlerts(db, {
      now: clock.now(),
      limit: Math.min(policy.batchSize, MAX_ALERTS_PER_PASS - handled),
      leaseMs: policy.leaseMs,
    });
    if (batch.length === 0) break;
    handled += batch.length;
    await deliverClaimed(deps, batch, { webhook, policy, log, tally });
  }

  const backlog = await refreshGauges(deps);
  const { delivered, failedAttempts, gaveUp } = tally;
  const status = failedAttempts + gaveUp > 0 && delivered === 0 ? 'partial' : 'succeeded';
  return { status, rows: delivered, details: { ...tally, ...backlog } };
}

/**
 * Delivers these alerts now, right after the transaction that recorded them committed, instead of
 * leaving them for the next alerts pass. The same claim (lease, attempt counted) as the pass, so a
 * pass running meanwhile never sends one twice at the same moment; a failure is retried by the
 * pass on its backoff. Without a webhook this does nothing (the pass notes the alerts).
 */
export async function deliverAlertsNow(
  deps: StreamDeps<unknown>,
  ids: readonly string[],
  policy: AlertDeliveryPolicy = DEFAULT_ALERT_DELIVERY_POLICY,
): Promise<DeliveryTally> {
  const tally: DeliveryTally = { delivered: 0, failedAttempts: 0, gaveUp: 0 };
  const { webhookUrl: url, webhookSecret: secret, maxReplyBytes } = deps.config.alerts;
  if (url === undefined || secret === undefined || ids.length === 0) return tally;
  const batch = await claimDueAlerts(deps.db, {
    now: deps.clock.now(),
    limit: ids.length,
    leaseMs: policy.leaseMs,
    ids,
  });
  const webhook = { url, secret: secret.reveal(), maxReplyBytes };
  const log = deps.logger.child({ stream: 'alerts' });
  await deliverClaimed(deps, batch, { webhook, policy, log, tally });
  return tally;
}

interface DeliveryTally {
  delivered: number;
  failedAttempts: number;
  gaveUp: number;
}

/** One attempt for each claimed alert, concurrently: delivered, retried later, or given up. */
async function deliverClaimed(
  deps: StreamDeps<unknown>,
  batch: readonly ClaimedAlert[],
  context: {
    webhook: { url: string; secret: string; maxReplyBytes: number };
    policy: AlertDeliveryPolicy;
    log: StreamDeps<unknown>['logger'];
    tally: DeliveryTally;
  },
): Promise<void> {
  const { db, clock, metrics } = deps;
  const { webhook, policy, log, tally } = context;
  const target = describeTarget(webhook.url);
  await pMap(
    batch,
    async (alert) => {
      const result = await deliverOne(alert, { ...webhook, policy, now: clock.now() });
      const now = clock.now();
      if (result.ok) {
        await markAlertDelivered(db, alert.id, now);
        tally.delivered++;
        metrics.alertDeliveries.inc({ outcome: 'delivered' });
        log.info(
          { alertId: alert.id, paymentIntentId: alert.paymentIntentId, attempts: alert.attempts },
          'alert delivered',
        );
        return;
      }
      const next = afterFailedAttempt({ attempts: alert.attempts, createdAt: alert.createdAt, now }, policy);
      if (next.giveUp) {
        await markAlertAttemptFailed(db, alert.id, { error: result.error, failedAt: now });
        tally.gaveUp++;
        metrics.alertDeliveries.inc({ outcome: 'gave_up' });
        log.error(
          {
            alertId: alert.id,
            paymentIntentId: alert.paymentIntentId,
            attempts: alert.attempts,
            error: result.error,
            target,
          },
          'alert delivery given up',
        );
        return;
      }
      await markAlertAttemptFailed(db, alert.id, { error: result.error, nextAttemptAt: next.nextAttemptAt });
      tally.failedAttempts++;
      metrics.alertDeliveries.inc({ outcome: 'failed' });
      log.warn(
        {
          alertId: alert.id,
          attempts: alert.attempts,
          error: result.error,
          target,
          nextAttemptAt: next.nextAttemptAt.toISOString(),
        },
        'alert delivery failed; will retry',
      );
    },
    { concurrency: policy.concurrency },
  );
}

async function deliverOne(
  alert: ClaimedAlert,
  input: { url: string; secret: string; maxReplyBytes: number; policy: AlertDeliveryPolicy; now: Date },
): Promise<{ ok: true } | { ok: false; error: string }> {
  const rawBody = serializeAlertBody({ id: alert.id, createdAt: alert.createdAt, payload: alert.payload });
  const headers = alertRequestHeaders({ alertId: alert.id, rawBody, now: input.now, secret: input.secret });
  const result = await postAlert({
    url: input.url,
    rawBody,
    headers,
    timeoutMs: input.policy.timeoutMs,
    maxReplyBytes: input.maxReplyBytes,
  });
  return result.ok ? { ok: true } : { ok: false, error: result.error };
}

async function refreshGauges(deps: StreamDeps<unknown>): Promise<{ undelivered: number; failed: number }> {
  const backlog = await countAlertBacklog(deps.db);
  deps.metrics.alertsUndelivered.set(backlog.undelivered);
  deps.metrics.alertsFailed.set(backlog.failed);
  return backlog;
}

/** The webhook as it may be logged: origin and path, never userinfo or query (either may hold a token). */
function describeTarget(url: string): string {
  const parsed = new URL(url);
  return `${parsed.protocol}//${parsed.host}${parsed.pathname}`;
}
