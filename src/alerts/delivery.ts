import type { Kysely } from 'kysely';
import { serializeAlertBody } from './alert-body.js';
import {
  afterFailedAttempt,
  DEFAULT_ALERT_DELIVERY_POLICY,
  type AlertDeliveryPolicy,
} from './delivery-policy.js';
import type { AlertDeliverySlots } from './delivery-slots.js';
import { alertRequestHeaders, type AlertSignatureScheme } from './sign-alert.js';
import { postAlert } from './webhook-sender.js';
import {
  claimDueAlerts,
  countAlertBacklog,
  markAlertAttemptFailed,
  markAlertDelivered,
  noteUndeliverableAlerts,
  type ClaimedAlert,
} from './alert-store.js';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import { unfenced } from '../leases/fenced-database.js';
import type { Logger } from '../log.js';
import type { PipelineMetrics } from '../metrics.js';
import type { DB } from '../warehouse/schema.js';
import { STREAM_NAME } from '../sync/stream-facts.js';

/** The alerts stream's name, as its log lines carry it. */
const STREAM = STREAM_NAME.alerts;

/** What delivery needs of a stream's deps (StreamDeps, src/streams/stream.ts); every pass's deps fit. */
export interface AlertDeliveryDeps {
  db: Kysely<DB>;
  clock: Clock;
  config: Config;
  logger: Logger;
  metrics: PipelineMetrics;
  /** The process's one limiter for alert POSTs, and its background deliveries. */
  alertDeliveries: AlertDeliverySlots;
  signal?: AbortSignal;
}

/** The alerts pass's outcome, a PassOutcome (src/streams/stream.ts). */
export interface AlertsPassOutcome {
  status: 'succeeded' | 'partial';
  rows: number;
  details: Record<string, unknown>;
}

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
  deps: AlertDeliveryDeps,
  policy: AlertDeliveryPolicy = DEFAULT_ALERT_DELIVERY_POLICY,
): Promise<AlertsPassOutcome> {
  const { db, config, logger } = deps;
  const log = logger.child({ stream: STREAM });
  const url = config.alerts.webhookUrl;
  const secret = config.alerts.webhookSecret;

  if (url === undefined || secret === undefined) {
    const reason = url === undefined ? NO_WEBHOOK : NO_SECRET;
    const noted = await noteUndeliverableAlerts(db, reason, MAX_ALERTS_PER_PASS);
    for (const alert of noted) {
      log.warn(
        { alertId: alert.id, type: alert.type, subject: alert.subject },
        `alert recorded but ${reason}`,
      );
    }
    const backlog = await refreshGauges(deps);
    return {
      status: 'succeeded',
      rows: 0,
      details: { webhook: 'not configured', noted: noted.length, ...backlog },
    };
  }

  const webhook = webhookOf(config, url, secret);
  const tally: DeliveryTally = { delivered: 0, failedAttempts: 0, gaveUp: 0 };
  const context = { webhook, policy, log, tally };
  let handled = 0;
  let drained = false;
  /** One alert: a slot of the process's limiter, then the claim, then the POST. */
  const next = async () => {
    handled++;
    const sent = await deps.alertDeliveries.inSlot(async () => {
      const [alert] = await claimDueAlerts(unfenced(db), { limit: 1, leaseMs: policy.leaseMs });
      if (alert === undefined) return false;
      await deliverClaimed(deps, alert, context);
      return true;
    });
    if (sent !== true) drained = true;
  };
  const more = () => !drained && handled < MAX_ALERTS_PER_PASS && deps.signal?.aborted !== true;
  // One claim first: an idle pass (every ALERTS_EVERY) costs one statement, as before.
  if (more()) await next();
  const worker = async () => {
    while (more()) await next();
  };
  await Promise.all(Array.from({ length: Math.max(1, policy.concurrency) }, worker));

  const backlog = await refreshGauges(deps);
  const { delivered, failedAttempts, gaveUp } = tally;
  const status = failedAttempts + gaveUp > 0 && delivered === 0 ? 'partial' : 'succeeded';
  return { status, rows: delivered, details: { ...tally, ...backlog } };
}

/**
 * Delivers these alerts now, right after the transaction that recorded them committed, instead of
 * leaving them for the next alerts pass. Each takes a slot of the process's limiter (the one the
 * pass uses), then the same claim as the pass (lease, attempt counted), so a pass running meanwhile
 * never sends one twice at the same moment; a failure is retried by the pass on its backoff.
 * Without a webhook this does nothing (the pass notes the alerts).
 */
export async function deliverAlertsNow(
  deps: AlertDeliveryDeps,
  ids: readonly string[],
  policy: AlertDeliveryPolicy = DEFAULT_ALERT_DELIVERY_POLICY,
): Promise<DeliveryTally> {
  const tally: DeliveryTally = { delivered: 0, failedAttempts: 0, gaveUp: 0 };
  const { webhookUrl: url, webhookSecret: secret } = deps.config.alerts;
  if (url === undefined || secret === undefined || ids.length === 0) return tally;
  const context = {
    webhook: webhookOf(deps.config, url, secret),
    policy,
    log: deps.logger.child({ stream: STREAM }),
    tally,
  };
  await Promise.all(
    ids.map((id) =>
      deps.alertDeliveries.inSlot(async () => {
        const [alert] = await claimDueAlerts(unfenced(deps.db), {
          limit: 1,
          leaseMs: policy.leaseMs,
          ids: [id],
        });
        if (alert !== undefined) await deliverClaimed(deps, alert, context);
      }),
    ),
  );
  return tally;
}

/**
 * deliverAlertsNow in the background: the caller (the intents tick) goes on at once, whatever the
 * receiver's speed; shutdown waits for it (AlertDeliverySlots.close). A failure is left to the
 * alerts pass, which retries it on its backoff: nothing is lost.
 */
export function deliverAlertsSoon(deps: AlertDeliveryDeps, ids: readonly string[]): void {
  deps.alertDeliveries.inBackground(async () => {
    try {
      await deliverAlertsNow(deps, ids);
    } catch (error) {
      deps.logger.warn(
        { stream: STREAM, err: error, alertIds: ids },
        'immediate alert delivery failed; the alerts pass will retry',
      );
    }
  });
}

interface Webhook {
  url: string;
  secret: string;
  /** ALERT_SIGNATURE_SCHEME: `rewards` or `standard-webhooks`. */
  scheme: AlertSignatureScheme;
  /** The User-Agent of every request we send (SVC_USER_AGENT, or `rewards-etl/<version>`). */
  userAgent: string;
  maxReplyBytes: number;
  /** `Basic …` when ALERT_WEBHOOK_URL carried user:password (docs/payment-intents.md). */
  authorization: string | undefined;
}

function webhookOf(
  config: Config,
  url: string,
  secret: NonNullable<Config['alerts']['webhookSecret']>,
): Webhook {
  const { alerts } = config;
  return {
    url,
    secret: secret.reveal(),
    scheme: alerts.signatureScheme,
    userAgent: config.api.userAgent,
    maxReplyBytes: alerts.maxReplyBytes,
    authorization: alerts.webhookAuthorization?.reveal(),
  };
}

interface DeliveryTally {
  delivered: number;
  failedAttempts: number;
  gaveUp: number;
}

interface DeliveryContext {
  webhook: Webhook;
  policy: AlertDeliveryPolicy;
  log: Logger;
  tally: DeliveryTally;
}

/** One attempt for a claimed alert: delivered, retried later, or given up. */
async function deliverClaimed(
  deps: AlertDeliveryDeps,
  alert: ClaimedAlert,
  context: DeliveryContext,
): Promise<void> {
  const { webhook, policy } = context;
  const result = await deliverOne(alert, { ...webhook, policy, now: deps.clock.now() });
  if (result.ok) await recordDelivered(deps, alert, context);
  else await recordFailedAttempt(deps, alert, result.error, context);
}

async function recordDelivered(deps: AlertDeliveryDeps, alert: ClaimedAlert, context: DeliveryContext) {
  await markAlertDelivered(unfenced(deps.db), alert);
  context.tally.delivered++;
  deps.metrics.alertDeliveries.inc({ outcome: 'delivered' });
  context.log.info({ ...alertFields(alert), attempts: alert.attempts }, 'alert delivered');
}

/** A failed attempt: retried on the policy's backoff, or given up past its attempts or age. */
async function recordFailedAttempt(
  deps: AlertDeliveryDeps,
  alert: ClaimedAlert,
  error: string,
  context: DeliveryContext,
): Promise<void> {
  const { policy, log, tally } = context;
  const target = describeTarget(context.webhook.url);
  const now = deps.clock.now();
  const next = afterFailedAttempt({ attempts: alert.attempts, createdAt: alert.createdAt, now }, policy);
  if (next.giveUp) {
    await markAlertAttemptFailed(unfenced(deps.db), alert, { error, giveUp: true });
    tally.gaveUp++;
    deps.metrics.alertDeliveries.inc({ outcome: 'gave_up' });
    log.error({ ...alertFields(alert), attempts: alert.attempts, error, target }, 'alert delivery given up');
    return;
  }
  await markAlertAttemptFailed(unfenced(deps.db), alert, { error, retryInMs: next.retryInMs });
  tally.failedAttempts++;
  deps.metrics.alertDeliveries.inc({ outcome: 'failed' });
  log.warn(
    {
      alertId: alert.id,
      attempts: alert.attempts,
      error,
      target,
      nextAttemptAt: new Date(now.getTime() + next.retryInMs).toISOString(),
    },
    'alert delivery failed; will retry',
  );
}

function alertFields(alert: ClaimedAlert) {
  return {
    alertId: alert.id,
    type: alert.type,
    subject: alert.subject,
    paymentIntentId: alert.paymentIntentId,
  };
}

async function deliverOne(
  alert: ClaimedAlert,
  input: Webhook & { policy: AlertDeliveryPolicy; now: Date },
): Promise<{ ok: true } | { ok: false; error: string }> {
  const rawBody = serializeAlertBody({
    id: alert.id,
    type: alert.type,
    createdAt: alert.createdAt,
    payload: alert.payload,
  });
  const headers = {
    ...alertRequestHeaders({
      alertId: alert.id,
      rawBody,
      now: input.now,
      secret: input.secret,
      scheme: input.scheme,
      userAgent: input.userAgent,
    }),
    ...(input.authorization === undefined ? {} : { authorization: input.authorization }),
  };
  const result = await postAlert({
    url: input.url,
    rawBody,
    headers,
    timeoutMs: input.policy.timeoutMs,
    maxReplyBytes: input.maxReplyBytes,
  });
  return result.ok ? { ok: true } : { ok: false, error: result.error };
}

async function refreshGauges(deps: AlertDeliveryDeps): Promise<{ undelivered: number; failed: number }> {
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
