import { type Insertable, type Transaction } from 'kysely';
import { challengeThresholdToJson, contentHash, parseChallenge, type Challenge } from '../records/index.js';
import type { PreviousRecord } from '../sync/snapshot-diff.js';
import type { VersionPlan } from '../sync/scd2.js';
import { markDeleted, recordVersions, statementChunks } from './history.js';
import { byId } from './restaurants.js';
import type { ChallengesTable, DB } from './schema.js';
import { fromExcluded, type Executor } from './database.js';

/** A challenge as stored; it carries no restaurant, so the caller supplies the one it queried. */
export function challengeRow(
  challenge: Challenge,
  restaurantId: string,
  seenAt: Date,
): Insertable<ChallengesTable> & { content_hash: string } {
  const { spendThreshold, minimumSpend, dineThreshold, referralThreshold } = challenge.threshold;
  const content = {
    restaurant_id: restaurantId,
    type: challenge.type,
    title: challenge.title,
    description: challenge.description,
    image: challenge.image,
    // Amounts stay digit strings inside the jsonb too: exact whatever their size.
    threshold: challengeThresholdToJson(challenge.threshold),
    spend_threshold_value: spendThreshold?.value ?? null,
    spend_threshold_currency: spendThreshold?.currency ?? null,
    minimum_spend_value: minimumSpend?.value ?? null,
    minimum_spend_currency: minimumSpend?.currency ?? null,
    dine_threshold: dineThreshold ?? null,
    referral_threshold: referralThreshold ?? null,
    token_reward_value: challenge.tokenReward.value,
    token_reward_currency: challenge.tokenReward.currency,
    start_time: challenge.startTime,
    end_time: challenge.endTime,
    terms: challenge.terms,
    accepted_currencies: challenge.acceptedCurrencies,
    created_at: challenge.createdAt,
  };
  return {
    id: challenge.id,
    ...content,
    threshold: JSON.stringify(content.threshold),
    updated_at: challenge.updatedAt,
    raw: JSON.stringify(challenge.raw),
    // The normalized content (currencies lower-case, amounts canonical) minus `updated_at`:
    // a touch or a change of casing alone is not a new version.
    content_hash: contentHash(content),
    first_seen_at: seenAt,
    last_seen_at: seenAt,
    deleted_at: null,
  };
}

const UPDATED_COLUMNS = [
  'restaurant_id',
  'type',
  'title',
  'description',
  'image',
  'threshold',
  'spend_threshold_value',
  'spend_threshold_currency',
  'minimum_spend_value',
  'minimum_spend_currency',
  'dine_threshold',
  'referral_threshold',
  'token_reward_value',
  'token_reward_currency',
  'start_time',
  'end_time',
  'terms',
  'accepted_currencies',
  'created_at',
  'updated_at',
  'raw',
  'content_hash',
  'last_seen_at',
] as const;

/** One page of `GET /challenges?restaurant=`: upsert (one statement) and versions on change. */
export async function upsertChallengePage(
  trx: Transaction<DB>,
  restaurantId: string,
  challenges: readonly Challenge[],
  seenAt: Date,
  options: { recheckStoredVersions?: boolean } = {},
): Promise<VersionPlan> {
  const unique = [...new Map(challenges.map((c) => [c.id, c])).values()].sort(byId);
  if (unique.length === 0) return { close: [], open: [], unchanged: [] };
  const rows = unique.map((challenge) => challengeRow(challenge, restaurantId, seenAt));
  for (const chunk of statementChunks(rows, 28)) {
    await trx
      .insertInto('rewards.challenges')
      .values(chunk)
      .onConflict((conflict) =>
        conflict.column('id').doUpdateSet({ ...fromExcluded(UPDATED_COLUMNS), deleted_at: null }),
      )
      .execute();
  }
  return recordVersions(
    trx,
    'rewards.challenges_history',
    rows.map((row, i) => ({ id: row.id, hash: row.content_hash, raw: unique[i]?.raw })),
    seenAt,
    options.recheckStoredVersions === true
      ? (raw) => {
          // `resync challenges`: the stored version's hash from its raw record, by today's rules.
          const parsed = parseChallenge(raw);
          return parsed.ok ? challengeRow(parsed.record, restaurantId, seenAt).content_hash : null;
        }
      : undefined,
  );
}

export interface ChallengeState extends PreviousRecord {
  restaurantId: string;
}

/** Every known challenge with its restaurant, current version hash and deletion flag. */
export async function loadChallengeStates(db: Executor): Promise<Map<string, ChallengeState>> {
  const rows = await db
    .selectFrom('rewards.challenges as c')
    .leftJoin('rewards.challenges_history as h', (join) =>
      join.onRef('h.id', '=', 'c.id').on('h.valid_to', 'is', null),
    )
    .select(['c.id', 'c.restaurant_id', 'c.deleted_at', 'h.content_hash'])
    .execute();
  return new Map(
    rows.map((row) => [
      row.id,
      { restaurantId: row.restaurant_id, hash: row.content_hash, deleted: row.deleted_at !== null },
    ]),
  );
}

/** Marks challenges deleted; their current history version ends at `at`. */
export function markChallengesDeleted(
  trx: Transaction<DB>,
  ids: readonly string[],
  at: Date,
): Promise<number> {
  return markDeleted(trx, { current: 'rewards.challenges', history: 'rewards.challenges_history' }, ids, at);
}
