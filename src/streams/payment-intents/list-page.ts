import type { PaymentIntent } from '../../records/payment-intent.js';
import { nextPollAt } from '../../sync/intent-poll-schedule.js';
import { listLookNeedsWrite, routeListedIntent } from '../../sync/intent-observation.js';
import {
  applyUnchangedListObservations,
  insertFirstSightsFromList,
  loadStoredIntents,
  type StoredIntent,
} from '../../warehouse/payment-intents.js';
import { readPaymentFirst } from './full-form.js';
import { recordFromList } from './record-from-list.js';
import type { Fetch, RecordFromList, Tick } from './tick-context.js';

/** What a list page leaves for the by-id fetches, and the intents the round has shown this tick. */
export interface ListPageOutput {
  seen: Set<string>;
  toFetch: Fetch[];
  /**
   * By-id reads of payments started as their page was applied (readPaymentFirst): awaited with the
   * tick's other fetches, never behind the rest of the round.
   */
  readsFirst: Promise<void>[];
}

/**
 * Applies one list page as routeListedIntent sorts it: unchanged rows are written only when a list
 * field moved or their poll is due (listLookNeedsWrite); a payment is recorded and alerted from the
 * list form at once (its full form read first only while the tick can afford the read: fullFormRoom;
 * that read starts at once, beside the round's next pages); first sights that cannot alert are
 * inserted from the list form; the rest is queued for a by-id fetch of the full form.
 */
export async function applyListPage(
  tick: Tick,
  records: readonly PaymentIntent[],
  context: { observedAt: Date; output: ListPageOutput },
): Promise<void> {
  const { deps, state } = tick;
  const { observedAt, output } = context;
  const fresh = records.filter((intent) => !output.seen.has(intent.id));
  for (const intent of fresh) output.seen.add(intent.id);
  const stored = await loadStoredIntents(
    deps.db,
    fresh.map((intent) => intent.id),
  );
  const unchanged: { intent: PaymentIntent; nextPollAt: Date | null }[] = [];
  const firstSights: PaymentIntent[] = [];
  const fromList: RecordFromList[] = [];
  const routing = {
    watchingSince: state.watchingSince,
    events: deps.config.alerts.events,
    payee: tick.payee,
  };
  for (const listed of fresh) {
    const row = stored.get(listed.id);
    const route = routeListedIntent(listed, row, routing);
    if (route.kind === 'insert-from-list') firstSights.push(listed);
    else if (route.kind === 'fetch')
      output.toFetch.push({ id: listed.id, why: route.why, createdAt: listed.createdAt, listed });
    else if (route.kind === 'record-from-list') {
      if (route.fullFormMissing && output.toFetch.length + output.readsFirst.length < tick.fullFormRoom) {
        const fetch: Fetch = {
          id: listed.id,
          why: route.previous === null ? 'first-sight' : 'changed',
          createdAt: listed.createdAt,
          listed,
          fallback: route,
        };
        const read = readPaymentFirst(tick, fetch, row);
        read.catch(() => undefined); // awaited by fetchFullForms; never left unhandled meanwhile
        output.readsFirst.push(read);
      } else fromList.push(route);
    } else if (route.kind === 'unchanged' && row !== undefined) {
      const pollAt = listPollAt(tick, listed, row, observedAt);
      if (
        listLookNeedsWrite(listed, row, {
          now: observedAt,
          stopsWatching: pollAt === null,
          writeEveryMs: tick.settings.unchangedLookWriteEveryMs,
        })
      )
        unchanged.push({ intent: listed, nextPollAt: pollAt });
      else tick.stats.unchangedNotWritten++;
    }
  }
  await applyUnchangedListObservations(deps.db, unchanged, observedAt);
  await insertFirstSights(tick, firstSights, observedAt);
  for (const route of fromList) await recordFromList(tick, route, observedAt);
}

/** The next poll of an intent the list shows unchanged: this look counts as one. */
function listPollAt(tick: Tick, listed: PaymentIntent, row: StoredIntent, observedAt: Date): Date | null {
  return nextPollAt(
    {
      now: observedAt,
      createdAt: listed.createdAt ?? row.createdAt ?? undefined,
      expiresAt: row.hasFullForm ? row.expiresAt : undefined,
      pollCount: row.pollCount + 1,
      status: row.status,
    },
    tick.settings.schedule,
  );
}

/** First sights that cannot alert, from the list form: rows and transitions in one transaction. */
async function insertFirstSights(
  tick: Tick,
  intents: readonly PaymentIntent[],
  observedAt: Date,
): Promise<void> {
  if (intents.length === 0) return;
  const { schedule } = tick.settings;
  const firstPollAt = (intent: PaymentIntent) =>
    nextPollAt(
      {
        now: observedAt,
        createdAt: intent.createdAt,
        expiresAt: undefined,
        pollCount: 1,
        status: intent.status,
      },
      schedule,
    );
  const inserted = await tick.deps.db
    .transaction()
    .execute((tx) =>
      insertFirstSightsFromList(tx, { intents, payee: tick.payee, observedAt, nextPollAt: firstPollAt }),
    );
  tick.stats.firstSights += inserted.length;
}
