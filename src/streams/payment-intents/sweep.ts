import type { Page } from '../../api/partner-api.js';
import type { PaymentIntent } from '../../records/payment-intent.js';
import { effectivePageSize } from '../../records/pagination.js';
import {
  followListOrder,
  LIST_ORDER_START,
  planIntentSweep,
  sweepReachedStop,
  type ListOrder,
  type ListRound,
} from '../../sync/intent-sweep-plan.js';
import { openIntentsReach } from '../../warehouse/payment-intent-polling.js';
import { storeRejections } from '../../warehouse/rejected-records.js';
import { stopsThePass } from '../pass-stop.js';
import { noteSchemaDrift } from '../schema-drift.js';
import { applyListPage, type ListPageOutput } from './list-page.js';
import { INTENTS_STREAM } from './stream-name.js';
import type { Tick } from './tick-context.js';

/** List pages requested ahead of the one being applied (the limiter still paces each request). */
const PREFETCH_PAGES = 2;

export interface SweepResult extends ListPageOutput {
  /** The round this tick read from, and where it stands after the tick. */
  round: ListRound;
  /** The page the round continues from next tick. */
  nextPage: number;
  /** Whether the round completed this tick (past its stop, or the end of the list). */
  completed: boolean;
  newestSeen: Date | null;
  serverPageSize: number | null;
}

/**
 * This tick's part of the list round (planIntentSweep): from the round's next page, at most
 * `pageBudget` pages, until the round is past every open intent and the discovery horizon (or the
 * end of the list on a full round). Pages are requested up to two ahead of the one being applied, never
 * past the page the round is expected to end on; each page is applied as it arrives, in list order.
 */
export async function sweepIntentList(
  tick: Tick,
  input: { fullSweepDue: boolean; pageBudget: number },
): Promise<SweepResult> {
  const { deps, settings, state } = tick;
  const plan = planIntentSweep({
    round: state.round,
    payee: tick.payee ?? null,
    now: tick.startedAt,
    fullSweepDue: input.fullSweepDue,
    pageSize: state.pageSize ?? settings.sweepPageSize,
    pageBudget: input.pageBudget,
    reach: await openIntentsReach(deps.db, tick.payee),
    newestCreatedAt: state.newestCreatedAt,
    discoveryLookbackMs: settings.discoveryLookbackMs,
  });
  const result: SweepResult = {
    seen: new Set(),
    toFetch: [],
    round: plan.round,
    nextPage: plan.round.nextPage,
    completed: false,
    newestSeen: null,
    serverPageSize: null,
  };
  const last = plan.round.nextPage + plan.maxPages - 1;
  // A pass of one tick (`run`) has nothing else to spend its budget on; a ticking pass keeps it for rounds.
  if (settings.slotMs <= 0)
    tick.fullFormRoom = Math.max(
      tick.fullFormReserve,
      tick.budget - (plan.prefetchThrough - plan.round.nextPage + 1),
    );
  const pages = prefetchingReader(tick, { last, prefetchThrough: plan.prefetchThrough });
  let order = LIST_ORDER_START;
  try {
    for (let page = plan.round.nextPage; page <= last; page++) {
      const answer = await pages.read(page);
      order = await applySweepPage(tick, answer, { order, result });
      result.nextPage = page + 1;
      const next = answer.pagination.nextPage;
      if (next === null || (!plan.round.full && sweepReachedStop(order, plan.stopBelow))) {
        result.completed = true;
        break;
      }
      // The server's next page is the one to read (it is page + 1 unless it says otherwise).
      if (next !== page + 1) {
        result.nextPage = next;
        break;
      }
    }
    if (!order.newestFirst)
      tick.log.warn('the payment intent list is not newest first: a round cannot stop early');
  } catch (error) {
    if (stopsThePass(error)) throw error;
    tick.noteError(error, { during: 'list sweep', page: result.nextPage });
  } finally {
    await pages.settle();
  }
  return result;
}

/**
 * Reads list pages in order, each time requesting up to PREFETCH_PAGES ahead (never past
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
      for (let ahead = 1; ahead <= PREFETCH_PAGES; ahead++)
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
  input: { order: ListOrder; result: SweepResult },
): Promise<ListOrder> {
  const { deps, settings, stats } = tick;
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
