import { Command } from 'commander';
import { requireApiBaseUrl, requireApiKey, type Config } from '../../config/config.js';
import type { CliContext } from '../context.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { requireMigratedWarehouse } from '../warehouse-ready.js';
import { onInterrupt } from '../interrupt.js';
import { secondsOption } from '../parse-options.js';
import type { Logger } from '../../log.js';
import type { BoundHttpServer, RunningHttpServer } from '../../http/server.js';
import type { RunningWorker } from '../../worker/worker.js';

/** A stuck worker's jobs get this long to finish before they are released and the process exits 1. */
const STUCK_STOP_DEADLINE_MS = 10_000;
/** Past the deadline, plus this, the process exits even if a dead connection holds the event loop. */
const STUCK_EXIT_GRACE_MS = 10_000;

export function workerCommand(context: CliContext): Command {
  return new Command('worker')
    .description(
      'long-running: register the job schedules, process jobs, serve /healthz, /readyz, /metrics and the status page on HTTP_HOST:HTTP_PORT (127.0.0.1 by default); SIGTERM/SIGINT finish or release in-flight jobs and exit 0',
    )
    .option(
      '--shutdown-deadline <seconds>',
      'how long active jobs may take to finish on SIGTERM before they are released',
      secondsOption('--shutdown-deadline'),
      30,
    )
    .action((options: { shutdownDeadline: number }) => runWorker(context, options));
}

/** Starts the worker and its HTTP server, and runs until a signal or a stuck verdict. */
async function runWorker(context: CliContext, options: { shutdownDeadline: number }): Promise<void> {
  const { startWorker } = await import('../../worker/worker.js');
  const { JOB_SET } = await import('../../../jobs/registry.js');
  const config = context.config();
  requireApiBaseUrl(config);
  requireApiKey(config);
  const logger = context.logger();
  await requireServices(config, logger);
  const bound = await bindPort(config);
  let onStuck = (): void => undefined;
  let worker: RunningWorker;
  try {
    worker = await startWorker({
      config,
      logger,
      jobs: JOB_SET,
      onStuck: () => onStuck(),
      httpPort: bound.port,
    });
  } catch (error) {
    await bound.close();
    throw error;
  }
  const http = bound.serve({
    host: config.httpHost,
    port: config.httpPort,
    db: worker.runtime.db,
    redis: worker.runtime.redis,
    config,
    clock: worker.runtime.deps.clock,
    metrics: worker.runtime.metrics,
    logger,
    liveness: () => worker.liveness(),
  });
  logger.info({ host: http.host, port: http.port }, `status page on ${http.url}`);
  const deadline = options.shutdownDeadline * 1000;
  const outcome = await new Promise<'interrupted' | 'stuck'>((resolve) => {
    const detach = onInterrupt((signal) => {
      detach();
      logger.info({ signal }, 'shutting down');
      void stopAll(worker.stop(Number.isFinite(deadline) ? deadline : 30_000), http).finally(() =>
        resolve('interrupted'),
      );
    });
    onStuck = () => {
      detach();
      void exitAfterStuck(logger, worker, http).finally(() => resolve('stuck'));
    };
  });
  if (outcome === 'stuck')
    throw new CliExit(
      ExitCode.failed,
      'a queue worker was stuck (not taking jobs): exiting so the supervisor starts a fresh worker',
    );
}

/** Postgres and Redis reachable (within STARTUP_TIMEOUT) and the warehouse migrated. */
async function requireServices(config: Config, logger: Logger): Promise<void> {
  const { waitForServices } = await import('../wait-for-services.js');
  await waitForServices(config, logger, { postgres: 'DATABASE_URL', redis: true });
  const { createDatabase } = await import('../../warehouse/database.js');
  const probe = createDatabase({ url: config.databaseUrl.reveal(), maxConnections: 1 });
  try {
    await requireMigratedWarehouse(probe, config.databaseUrl.reveal());
  } finally {
    await probe.destroy();
  }
}

/**
 * The port before any job: a worker that cannot serve /healthz and /metrics must not take jobs
 * (issue 40). A taken port exits 1 naming HTTP_PORT.
 */
async function bindPort(config: Config): Promise<BoundHttpServer> {
  const { bindHttpServer, HttpPortError } = await import('../../http/server.js');
  return bindHttpServer(config.httpHost, config.httpPort).catch((error: unknown) => {
    throw error instanceof HttpPortError ? new CliExit(ExitCode.failed, error.message) : error;
  });
}

async function stopAll(stopping: Promise<void>, http: RunningHttpServer): Promise<void> {
  await stopping;
  await http.close();
}

/**
 * A fresh process is the one reset that clears every client state a failover can leave behind (a
 * dead socket, a stale slot map, a Sentinel answer from before the promotion), and the supervisor
 * (systemd Restart=always, a container restart policy) is already there.
 */
function exitAfterStuck(logger: Logger, worker: RunningWorker, http: RunningHttpServer): Promise<void> {
  logger.error(
    { deadlineMs: STUCK_STOP_DEADLINE_MS },
    'exiting with status 1 so the supervisor starts a fresh worker',
  );
  setTimeout(() => process.exit(ExitCode.failed), STUCK_STOP_DEADLINE_MS + STUCK_EXIT_GRACE_MS).unref();
  return stopAll(worker.abandon(STUCK_STOP_DEADLINE_MS), http);
}
