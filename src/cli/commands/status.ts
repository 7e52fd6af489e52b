import { Command } from 'commander';
import type { CliContext } from '../context.js';
import { requireMigratedWarehouse } from '../warehouse-ready.js';

export function statusCommand(context: CliContext): Command {
  return new Command('status')
    .description(
      'watermark and lag, windows by state, queue depths, last run per stream, open intents, undelivered alerts, rejected records',
    )
    .option('--json', 'print the report as JSON on stdout (logs go to stderr)')
    .action(async (options: { json?: boolean }) => {
      const { createOneShotRedis } = await import('../one-shot-redis.js');
      const { systemClock } = await import('../../clock.js');
      const { collectStatus } = await import('../../status/collect-status.js');
      const { renderStatusText } = await import('../../status/render-text.js');
      const { createDatabase } = await import('../../warehouse/database.js');
      const config = context.config();
      const logger = context.logger();
      const db = createDatabase({
        url: config.databaseUrl.reveal(),
        maxConnections: 4,
        applicationName: 'rewards-etl status',
      });
      try {
        await requireMigratedWarehouse(db, config.databaseUrl.reveal());
      } catch (error) {
        await db.destroy();
        throw error;
      }
      const { redis } = createOneShotRedis(config.redisUrl.reveal(), logger);
      try {
        await redis
          .connect()
          .catch((error: unknown) => logger.warn({ err: error }, 'redis unreachable; queue depths skipped'));
        const report = await collectStatus({ db, redis, config, clock: systemClock });
        context.stdout.write(
          options.json === true ? `${JSON.stringify(report, null, 2)}\n` : renderStatusText(report),
        );
      } finally {
        redis.disconnect();
        await db.destroy();
      }
    });
}
