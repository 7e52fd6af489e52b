import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey } from '../../config.js';
import type { CliContext } from '../context.js';
import { requireMigratedWarehouse } from '../warehouse-ready.js';
import { onInterrupt } from '../interrupt.js';

export function workerCommand(context: CliContext): Command {
  return new Command('worker')
    .description(
      'long-running: register the job schedules, process jobs, serve /healthz, /readyz, /metrics and the status page on HTTP_HOST:HTTP_PORT (127.0.0.1 by default); SIGTERM/SIGINT finish or release in-flight jobs and exit 0',
    )
    .option(
      '--shutdown-deadline <seconds>',
      'how long active jobs may take to finish on SIGTERM before they are released',
      '30',
    )
    .action(async (options: { shutdownDeadline: string }) => {
      const { startWorker } = await import('../../worker/worker.js');
      const config = context.config();
      requireApiBaseUrl(config);
      requireApiKey(config);
      const logger = context.logger();
      const { createDatabase } = await import('../../warehouse/database.js');
      const probe = createDatabase({ url: config.databaseUrl.reveal(), maxConnections: 1 });
      try {
        await requireMigratedWarehouse(probe, config.databaseUrl.reveal());
      } finally {
        await probe.destroy();
      }
      const worker = await startWorker({ config, logger });
      const { startHttpServer } = await import('../../http/server.js');
      const http = await startHttpServer({
        host: config.httpHost,
        port: config.httpPort,
        db: worker.runtime.db,
        redis: worker.runtime.redis,
        config,
        clock: worker.runtime.deps.clock,
        metrics: worker.runtime.metrics,
        logger,
      });
      logger.info({ host: http.host, port: http.port }, `status page on ${http.url}`);
      await new Promise<void>((resolve) => {
        const detach = onInterrupt((signal) => {
          detach();
          logger.info({ signal }, 'shutting down');
          const deadline = Number(options.shutdownDeadline) * 1000;
          void worker
            .stop(Number.isFinite(deadline) ? deadline : 30_000)
            .then(() => http.close())
            .finally(resolve);
        });
      });
    });
}
