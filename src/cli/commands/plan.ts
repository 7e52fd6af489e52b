import { Command } from 'commander';
import type { CliContext } from '../context.js';
import { requireMigratedWarehouse } from '../warehouse-ready.js';

export function planCommand(context: CliContext): Command {
  return new Command('plan')
    .description(
      'projects, from the counts in the warehouse and the settings, the requests per hour of each stream and how fresh each kind of record will be (docs/freshness.md)',
    )
    .option('--json', 'print the projection as JSON on stdout')
    .action(async (options: { json?: boolean }) => {
      const { createDatabase } = await import('../../warehouse/database.js');
      const { createPostgresClock } = await import('../../warehouse/postgres-clock.js');
      const { readLearnedIntervals, readPlanCounts } = await import('../../warehouse/plan-counts.js');
      const { projectFreshness } = await import('../../sync/freshness-plan.js');
      const { readRequestsSince } = await import('../../warehouse/record-reads.js');
      const { STREAM_NAMES } = await import('../../sync/stream-facts.js');
      const { locationRefreshBudget } = await import('../../streams/locations.js');
      const { renderPlanText } = await import('../../status/render-plan.js');
      const { waitForServices } = await import('../wait-for-services.js');
      const config = context.config();
      await waitForServices(config, context.logger(), { postgres: 'DATABASE_URL' });
      const db = createDatabase({
        url: config.databaseUrl.reveal(),
        maxConnections: 2,
        applicationName: 'rewards-etl plan',
      });
      try {
        await requireMigratedWarehouse(db, config.databaseUrl.reveal());
        const clock = createPostgresClock(db, { refreshMs: 3_600_000 });
        await clock.sync().catch(() => undefined);
        clock.close();
        const [counts, learnedIntervalMs, lastHour] = await Promise.all([
          readPlanCounts(db, clock.now()),
          readLearnedIntervals(db),
          readRequestsSince(db, STREAM_NAMES, new Date(clock.now().getTime() - 3_600_000)),
        ]);
        const plan = projectFreshness({
          rateLimitRps: config.api.rateLimitRps,
          pageSize: config.api.pageSize,
          schedules: config.schedules,
          lookback: {
            windows: Math.ceil(config.checkins.lookbackMs / config.checkins.windowMs),
            everyMs: config.checkins.lookbackEveryMs,
          },
          intentPollShare: config.intents.pollShare,
          memberSyncShare: config.members.syncShare,
          locationsPerPass: locationRefreshBudget(config),
          counts,
          cadences: config.freshness.cadences,
          learnedIntervalMs,
          requestsLastHour: Object.fromEntries(lastHour.map((row) => [row.stream, row.requests])),
        });
        context.stdout.write(
          options.json === true
            ? `${JSON.stringify({ counts, ...plan }, null, 2)}\n`
            : renderPlanText(plan, config.api.rateLimitRps),
        );
      } finally {
        await db.destroy();
      }
    });
}
