import { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { terminalColumns } from '../terminal.js';
import { requireMigratedWarehouse } from '../warehouse-ready.js';

export function statusCommand(context: CliContext): Command {
  return new Command('status')
    .description(
      'watermark and lag, windows by state, queue depths, last run per stream, open intents, undelivered alerts, rejected records, schema drift',
    )
    .option('--json', 'print the report as JSON on stdout (logs go to stderr)')
    .action(async (options: { json?: boolean }) => {
      const { createOneShotClient } = await import('../../redis/connection.js');
      const { createPostgresClock } = await import('../../warehouse/postgres-clock.js');
      const { collectStatus } = await import('../../status/collect-status.js');
      const { renderStatusText } = await import('../../status/render-text.js');
      const { createDatabase } = await import('../../warehouse/database.js');
      const { waitForServices } = await import('../wait-for-services.js');
      const config = context.config();
      const logger = context.logger();
      // Redis is optional here: without it the queue depths are reported as unknown.
      await waitForServices(config, logger, { postgres: 'DATABASE_URL' });
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
      const { redis } = createOneShotClient(config.redis, logger);
      let verdict: 'ok' | 'attention' = 'ok';
      try {
        await redis
          .connect()
          .catch((error: unknown) => logger.warn({ err: error }, 'redis unreachable; queue depths skipped'));
        // Ages and lags by the pipeline's clock (Postgres's), as the workers wrote the times.
        const clock = createPostgresClock(db, { refreshMs: 3_600_000 });
        await clock.sync().catch(() => undefined);
        clock.close();
        const report = await collectStatus({ db, redis, config, clock });
        context.stdout.write(
          options.json === true
            ? `${JSON.stringify(report, null, 2)}\n`
            : // Error lines cut at the terminal's right edge (100 columns when not a terminal).
              renderStatusText(report, { width: terminalColumns(context.stdout) }),
        );
        // Exit 1 on ATTENTION, so `rewards-etl status` serves as a health check (README, docs/contract.md).
        if (!report.verdict.ok) verdict = 'attention';
      } finally {
        redis.disconnect();
        await db.destroy();
      }
      if (verdict === 'attention') throw new CliExit(ExitCode.failed, '');
    });
}
