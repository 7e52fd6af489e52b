import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Config } from '../config/config.js';
import type { RedisClient } from '../redis/connection.js';
import { createSpendLedger } from '../api/spend-ledger.js';
import { allocationFor } from '../streams/stream-budget.js';
import { MEMBER_KINDS } from '../sync/member-read-plan.js';
import { countDueMemberRecords } from '../warehouse/record-reads.js';
import type { DB } from '../warehouse/schema.js';
import { pingRedis } from './queue-depths.js';
import { withTimeout } from '../with-timeout.js';
import type { BudgetSummary } from './status-report.js';

// Reads the BUDGET part of `status` and the status page (docs/rate-limit.md, "One budget"): per stream
// its share (the floor it keeps), the requests the ledger counted in the last hour, and its
// allowance for the next hour if every stream wants again what it spent, members what is due now.

const HOUR_MS = 3_600_000;
const LEDGER_TIMEOUT_MS = 2_000;

export async function readBudget(sources: {
  db: Kysely<DB>;
  redis: RedisClient | undefined;
  config: Config;
  clock: Clock;
}): Promise<BudgetSummary> {
  const { redis, config, clock } = sources;
  const limitPerHour = Math.round(config.api.rateLimitRps * 3600);
  const unavailable = (reason: string): BudgetSummary => ({
    available: false,
    reason,
    limitPerHour,
    streams: [],
  });
  if (redis === undefined) return unavailable('no Redis connection given');
  const ping = await pingRedis(redis);
  if (!ping.ok) return unavailable(`Redis unreachable: ${ping.reason}`);
  try {
    const ledger = createSpendLedger({
      redis,
      prefix: config.redisPrefix,
      nowMs: () => clock.now().getTime(),
    });
    const [{ spent: spend }, membersDue] = await Promise.all([
      withTimeout(ledger.spentOver(HOUR_MS), LEDGER_TIMEOUT_MS, 'spend ledger'),
      countDueMemberRecords(sources.db, clock.now(), MEMBER_KINDS.length),
    ]);
    const allocation = allocationFor({
      config,
      intervalMs: HOUR_MS,
      spend,
      windowMs: HOUR_MS,
      demands: { members: membersDue },
    });
    return {
      available: true,
      limitPerHour,
      streams: allocation.map((row) => ({
        stream: row.stream,
        share: row.share,
        floorPerHour: row.floor,
        requestsLastHour: spend[row.stream],
        demandPerHour: row.demand,
        allowancePerHour: row.allowance,
      })),
    };
  } catch (error) {
    return unavailable(`spend ledger unreadable: ${error instanceof Error ? error.message : String(error)}`);
  }
}
