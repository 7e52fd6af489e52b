import type { Page } from '../../api/partner-api.js';
import type { PaymentIntent } from '../../records/payment-intent.js';
import { effectivePageSize } from '../../records/pagination.js';
import type { DueIntent } from '../../sync/intent-poll-schedule.js';
import {
  followListOrder,
  LIST_ORDER_START,
  planIntentSweep,
  sweepReachedStop,
  type ListOrder,
} from '../../sync/intent-sweep-plan.js';
import { openIntentsReach } from '../../warehouse/payment-intent-polling.js';
import { storeRejections } from '../../warehouse/rejected-records.js';
import { stopsThePass } from '../pass-stop.js';
import { noteSchemaDrift } from '../schema-drift.js';
import { applyListPage, type ListPageOutput } from './list-page.js';
import { INTENTS_STREAM } from './stream-name.js';
import type { Tick } from './tick-context.js';

export interface SweepResult extends ListPageOutput {
  newestSeen: Date | null;
  reachedHorizon: boolean;
  serverPageSize: number | null;
}

/**
 * The list sweep, newest first, as far as planIntentSweep says: down to the discovery horizon, past
 * every open intent when the budget affords it (so a payment anywhere among them is seen this tick),
 * or the whole list on a full sweep. Each page is applied as it arrives (applyListPage).
 */
export async function sweepIntentList(
  tick: Tick,
  input: { due: readonly DueIntent[]; fullSweep: boolean },
): Promise<SweepResult> {
  const { deps, settings, state } = tick;
  const plan = planIntentSweep({
    due: input.due,
    pageSize: state.pageSize ?? settings.sweepPageSize,
    budget: tick.budget,
    fullSweep: input.fullSweep,
    reach: await openIntentsReach(deps.db, tick.payee),
    newestCreatedAt: state.newestCreatedAt,
    discoveryLookbackMs: settings.discoveryLookbackMs,
  });
  const result: SweepResult = {
    seen: new Set(),
    toFetch: [],
    newestSeen: null,
    reachedHorizon: false,
    serverPageSize: null,
  };
  let order = LIST_ORDER_START;
  try {
    const pages = deps.api.paymentIntentPages({
      ...(tick.payee === undefined ? {} : { payee: tick.payee }),
      pageSize: settings.sweepPageSize,
      priority: 'high',
      signal: deps.signal,
    });
    for await (const page of pages) {
      order = await applySweepPage(tick, page, { order, result });
      if (page.pagination.nextPage === null) result.reachedHorizon = true;
      // A full sweep has no stop: it reads to the end.
      if (sweepReachedStop(order, plan.stopBelow)) {
        result.reachedHorizon = true;
        break;
      }
      if (tick.stats.pages >= plan.maxPages) break;
    }
    if (!order.newestFirst)
      tick.log.warn('the payment intent list is not newest first: sweeps cannot stop early');
  } catch (error) {
    if (stopsThePass(error)) throw error;
    tick.noteError(error, { during: 'list sweep' });
  }
  return result;
}

/** One page of the sweep: counted, its rejections stored, its records applied, its drift noted. */
async function applySweepPage(
  tick: Tick,
  page: Page<PaymentIntent>,
  input: { order: ListOrder; result: SweepResult },
): Promise<ListOrder> {
  const { deps, settings, stats } = tick;
  stats.requests++;
  stats.pages++;
  input.result.serverPageSize = effectivePageSize(page.pagination, settings.sweepPageSize);
  const observedAt = deps.clock.now();
  if (page.rejections.length > 0) {
    stats.rejected += page.rejections.length;
    deps.metrics.recordsRejected.inc({ stream: INTENTS_STREAM }, page.rejections.length);
    await storeRejections(deps.db, INTENTS_STREAM, page.rejections, observedAt);
  }
  const order = followListOrder(input.order, page.records);
  input.result.newestSeen = order.newestSeen;
  await applyListPage(tick, page.records, { observedAt, output: input.result });
  await noteSchemaDrift(deps, 'payment_intents.list', page.drift);
  return order;
}
