import type { Page } from '../../api/partner-api.js';
import type { PaymentIntent } from '../../records/payment-intent.js';
import { effectivePageSize } from '../../records/pagination.js';
import {
  followListOrder,
  LIST_ORDER_START,
  planIntentSweep,
  splitListPages,
  sweepReachedStop,
  type ListOrder,
  type ListRound,
  type SweepPlan,
} from '../../sync/intent-sweep-plan.js';
import type { OpenIntentsReach } from '../../warehouse/payment-intent-polling.js';
import { storeRejections } from '../../warehouse/rejected-records.js';
import { stopsThePass } from '../pass-stop.js';
import { noteSchemaDrift } from '../schema-drift.js';
import { applyListPage, type ListPageOutput } from './list-page.js';
import { INTENTS_STREAM } from './stream-name.js';
import type { Tick } from './tick-context.js';

/** Where one round stands after this tick read from it. */
export interface RoundRead {
  /** The round this tick read from. */
  round: ListRound;
  /** The page the round continues from next tick. */
  nextPage: number;
  /** Whether the round completed this tick (past its stop, or the end of the list). */
  completed: boolean;
  newestSeen: Date | null;
}

export interface SweepResult extends ListPageOutput {
  /** The round past the open intents (null when the tick read none: before the first horizon). */
  open: RoundRead | null;
  /** The full round, when one is in progress. */
  full: RoundRead | null;
  serverPageSize: number | null;
}

/**
 * This tick's part of the list rounds (planIntentSweep): the round past every open intent and the
 * discovery horizon, from its next page, and beside it the full round when one is due or in progress
 * (splitListPages gives each its pages). Pages are requested up to `prefetchPages` ahead of the one being applied,
 * never past the page the round is expected to end on; each is applied as it arrives, in list order.
 */
export async function sweepIntentList(
  tick: Tick,
  input: { fullSweepDue: boolean; pageBudget: number },
): Promise<SweepResult> {
  const { settings, state } = tick;
  const ticking = settings.slotMs > 0;
  const common = {
    payee: tick.payee ?? null,
    now: tick.startedAt,
    pageSize: state.pageSize ?? settings.sweepPageSize,
    reach: tick.reach,
    newestCreatedAt: state.newestCreatedAt,
    discoveryLookbackMs: settings.discoveryLookbackMs,
  };
  const fullRound = state.fullRound !== null || input.fullSweepDue;
  const split = splitListPages({
    pageBudget: input.pageBudget,
    fullRound,
    hasHorizon: state.newestCreatedAt !== null,
    ticking,
    fullRoundShare: settings.fullRoundShare,
  });
  const result: SweepResult = {
    seen: new Set(),
    toFetch: [],
    readsFirst: [],
    open: null,
    full: null,
    serverPageSize: null,
  };
  if (split.open > 0) {
    const plan = planIntentSweep({
      ...common,
      round: state.round,
      fullSweepDue: false,
      pageBudget: split.open,
    });
    // A pass of one tick (`run`) has nothing else to spend its budget on; a ticking pass keeps it for rounds.
    if (!ticking)
      tick.fullFormRoom = Math.max(
        tick.fullFormReserve,
        tick.budget - (plan.prefetchThrough - plan.round.nextPage + 1) - (fullRound ? 1 : 0),
      );
    result.open = await readRound(tick, plan, result, common.reach);
  }
  const fullPages = ticking ? split.full : Math.min(split.full, input.pageBudget - tick.stats.pages);
  if (fullRound && fullPages > 0) {
    const plan = planIntentSweep({
      ...common,
      round: state.fullRound,
      fullSweepDue: true,
      pageBudget: fullPages,
    });
    result.full = await readRound(tick, plan, result, null);
  }
  return result;
}

/** Reads one round's pages for this tick, as `plan` says, applying each as it arrives. */
async function readRound(
  tick: Tick,
  plan: SweepPlan,
  output: SweepResult,
  reach: OpenIntentsReach | null,
): Promise<RoundRead> {
  const oldest =
    reach === null
      ? undefined
      : { createdAt: reach.oldestCreatedAt, ids: reach.oldestIds, seen: output.seen };
  const read: RoundRead = {
    round: plan.round,
    nextPage: plan.round.nextPage,
    completed: false,
    newestSeen: null,
  };
  const last = plan.round.nextPage + plan.maxPages - 1;
  const pages = prefetchingReader(tick, { last, prefetchThrough: plan.prefetchThrough });
  let order = LIST_ORDER_START;
  try {
    for (let page = plan.round.nextPage; page <= last; page++) {
      const answer = await pages.read(page);
      order = await applySweepPage(tick, answer, { order, output });
      read.newestSeen = order.newestSeen;
      read.nextPage = page + 1;
      const next = answer.pagination.nextPage;
      if (next === null || (!plan.round.full && sweepReachedStop(order, plan.stopBelow, oldest))) {
        read.completed = true;
        break;
      }
      // The server's next page is the one to read (it is page + 1 unless it says otherwise).
      if (next !== page + 1) {
        read.nextPage = next;
        break;
      }
    }
    if (!order.newestFirst)
      tick.log.warn('the payment intent list is not newest first: a round cannot stop early');
  } catch (error) {
    if (stopsThePass(error)) throw error;
    tick.noteError(error, { during: 'list sweep', page: read.nextPage, full: plan.round.full });
  } finally {
    await pages.settle();
  }
  return read;
}

/**
 * Reads list pages in order, each time requesting up to the pass's `prefetchPages` ahead (never past
 * `prefetchThrough` nor `last`). Pages requested but not read (a stop, an error) are dropped on
 * `settle`: the round reads them again.
 */
function prefetchingReader(
  tick: Tick,
  bounds: { last: number; prefetchThrough: number },
): { read(page: number): Promise<Page<PaymentIntent>>; settle(): Promise<void> } {
  const inFlight = new Map<number, Promise<Page<PaymentIntent>>>();
  const request = (page: number): Promise<Page<PaymentIntent>> => {
    const known = inFlight.get(page);
    if (known !== undefined) return known;
    const pending = firstPage(tick, page);
    pending.catch(() => undefined); // read in order; one never read must not go unhandled
    inFlight.set(page, pending);
    return pending;
  };
  return {
    read(page) {
      const answer = request(page);
      for (let ahead = 1; ahead <= tick.settings.prefetchPages; ahead++)
        if (page + ahead <= Math.min(bounds.prefetchThrough, bounds.last)) void request(page + ahead);
      inFlight.delete(page);
      return answer;
    },
    async settle() {
      await Promise.allSettled(inFlight.values());
    },
  };
}

/** One list page at `page`, counted as a request when asked. */
async function firstPage(tick: Tick, page: number): Promise<Page<PaymentIntent>> {
  const { deps, settings } = tick;
  tick.stats.requests++;
  const pages = deps.api.paymentIntentPages({
    ...(tick.payee === undefined ? {} : { payee: tick.payee }),
    pageSize: settings.sweepPageSize,
    startPage: page,
    priority: 'high',
    signal: deps.signal,
  });
  for await (const answer of pages) return answer;
  throw new Error(`payment intent list page ${page} gave no answer`);
}

/** One page of the round: counted, its rejections stored, its records applied, its drift noted. */
async function applySweepPage(
  tick: Tick,
  page: Page<PaymentIntent>,
  input: { order: ListOrder; output: SweepResult },
): Promise<ListOrder> {
  const { deps, settings, stats } = tick;
  stats.pages++;
  input.output.serverPageSize = effectivePageSize(page.pagination, settings.sweepPageSize);
  const observedAt = deps.clock.now();
  if (page.rejections.length > 0) {
    stats.rejected += page.rejections.length;
    deps.metrics.recordsRejected.inc({ stream: INTENTS_STREAM }, page.rejections.length);
    await storeRejections(deps.db, INTENTS_STREAM, page.rejections, observedAt);
  }
  const order = followListOrder(input.order, page.records);
  await applyListPage(tick, page.records, { observedAt, output: input.output });
  await noteSchemaDrift(deps, 'payment_intents.list', page.drift);
  return order;
}
