import { sql } from 'kysely';
import type { ListRound } from '../sync/intent-sweep-plan.js';
import type { Executor } from './database.js';

// The payment intents stream's state: its row of rewards.sync_state, keyed by the stream's name
// (the caller passes the registry's name).

export interface IntentStreamState {
  /** When the pipeline began watching intents: paid before this raises no alert at first sight. */
  watchingSince: Date;
  lastFullSweepAt: Date | null;
  /** Newest created_at of an intent fully processed by a sweep (the discovery horizon). */
  newestCreatedAt: Date | null;
  /** The page size the server applied on the last sweep. */
  pageSize: number | null;
  /** The list round in progress (src/sync/intent-sweep-plan.ts); null between rounds. */
  round: ListRound | null;
  /** The full round (the whole list) in progress beside it; null between full rounds. */
  fullRound: ListRound | null;
}

/**
 * Reads the stream state, storing `watchingSince = now` the first time. Insert-or-keep in one
 * statement, so two first passes racing agree on one moment.
 */
export async function loadIntentStreamState(
  db: Executor,
  stream: string,
  now: Date,
): Promise<IntentStreamState> {
  const initial = JSON.stringify({ watchingSince: now.toISOString() });
  await sql`
    insert into rewards.sync_state (stream, state, updated_at)
    values (${stream}, ${initial}::jsonb, ${now}::timestamptz)
    on conflict (stream) do update
      set state = jsonb_build_object('watchingSince', ${now.toISOString()}::text) || rewards.sync_state.state
      where not (rewards.sync_state.state ? 'watchingSince')`.execute(db);
  const row = await db
    .selectFrom('rewards.sync_state')
    .select('state')
    .where('stream', '=', stream)
    .executeTakeFirstOrThrow();
  const state = (row.state ?? {}) as Record<string, unknown>;
  return {
    watchingSince: readDate(state['watchingSince']) ?? now,
    lastFullSweepAt: readDate(state['lastFullSweepAt']),
    newestCreatedAt: readDate(state['newestCreatedAt']),
    pageSize: typeof state['pageSize'] === 'number' ? state['pageSize'] : null,
    round: readRound(state['round']),
    fullRound: readRound(state['fullRound']),
  };
}

/** Merges fields into the stream state; `watchingSince` is never overwritten. */
export async function saveIntentStreamState(
  db: Executor,
  stream: string,
  patch: Partial<Omit<IntentStreamState, 'watchingSince'>>,
  now: Date,
): Promise<void> {
  const json: Record<string, unknown> = {};
  if (patch.lastFullSweepAt !== undefined)
    json['lastFullSweepAt'] = patch.lastFullSweepAt?.toISOString() ?? null;
  if (patch.newestCreatedAt !== undefined)
    json['newestCreatedAt'] = patch.newestCreatedAt?.toISOString() ?? null;
  if (patch.pageSize !== undefined) json['pageSize'] = patch.pageSize;
  if (patch.round !== undefined) json['round'] = roundJson(patch.round);
  if (patch.fullRound !== undefined) json['fullRound'] = roundJson(patch.fullRound);
  await sql`
    update rewards.sync_state
    set state = state || ${JSON.stringify(json)}::jsonb, updated_at = ${now}::timestamptz
    where stream = ${stream}`.execute(db);
}

function readDate(value: unknown): Date | null {
  if (typeof value !== 'string') return null;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

function roundJson(round: ListRound | null): Record<string, unknown> | null {
  if (round === null) return null;
  return {
    ...round,
    startedAt: round.startedAt.toISOString(),
    newestSeen: round.newestSeen?.toISOString() ?? null,
    horizonCap: round.horizonCap?.toISOString() ?? null,
  };
}

/** A stored round, or null when it is absent or not in the shape this version writes (a new round starts). */
function readRound(value: unknown): ListRound | null {
  if (typeof value !== 'object' || value === null) return null;
  const round = value as Record<string, unknown>;
  const startedAt = readDate(round['startedAt']);
  const nextPage = round['nextPage'];
  if (startedAt === null || typeof nextPage !== 'number' || !Number.isInteger(nextPage) || nextPage < 0)
    return null;
  return {
    nextPage,
    full: round['full'] === true,
    startedAt,
    newestSeen: readDate(round['newestSeen']),
    horizonCap: readDate(round['horizonCap']),
    failed: round['failed'] === true,
    payee: typeof round['payee'] === 'string' ? round['payee'] : null,
  };
}
