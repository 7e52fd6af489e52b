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
      const { Redis } = await import('ioredis');
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
      // A one-shot reader: give up on Redis quickly instead of waiting for it to come back.
      const redis = new Redis(config.redisUrl.reveal(), {
        lazyConnect: true,
        connectTimeout: 2_000,
        maxRetriesPerRequest: 1,
        retryStrategy: (times) => (times > 2 ? null : 200),
      });
      redis.on('error', (error: Error) => logger.debug({ err: error }, 'redis connection error'));
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
