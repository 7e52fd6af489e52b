import type { Kysely } from 'kysely';
import type { Config } from '../config/config.js';
import type { Logger } from '../log.js';
import type { PipelineRuntime } from '../runtime/pipeline.js';
import type { DB } from '../warehouse/schema.js';
import { CliExit, ExitCode } from './exit-codes.js';

const MISSING_DATABASE = '3D000';

/**
 * Stops a command early, with the fix in the message, when the warehouse is not there yet:
 * otherwise the first query fails with a bare `relation "rewards.…" does not exist`.
 */
export async function requireMigratedWarehouse(db: Kysely<DB>, databaseUrl: string): Promise<void> {
  const { migrationsCurrent } = await import('../warehouse/migrate.js');
  const name = new URL(databaseUrl).pathname.slice(1);
  let current: boolean;
  try {
    current = await migrationsCurrent(db);
  } catch (error) {
    if ((error as { code?: string }).code === MISSING_DATABASE) {
      throw new CliExit(
        ExitCode.failed,
        `database "${name}" does not exist yet: run \`rewards-etl migrate\` first`,
      );
    }
    throw error;
  }
  if (!current) {
    throw new CliExit(
      ExitCode.failed,
      `the warehouse in database "${name}" is not migrated (or has pending migrations): run \`rewards-etl migrate\` first`,
    );
  }
}

/**
 * The runtime a one-shot command (run, backfill, verify) works with, opened only once the
 * warehouse is known to be migrated; closed again when it is not.
 */
export async function openMigratedRuntime(
  config: Config,
  logger: Logger,
  applicationName: string,
): Promise<PipelineRuntime> {
  const { createPipelineRuntime } = await import('../runtime/pipeline.js');
  const { waitForServices } = await import('./wait-for-services.js');
  await waitForServices(config, logger, { postgres: 'DATABASE_URL', redis: true });
  const runtime = createPipelineRuntime({ config, logger, applicationName });
  try {
    await requireMigratedWarehouse(runtime.db, config.databaseUrl.reveal());
    await runtime.clockReady();
  } catch (error) {
    await runtime.close();
    throw error;
  }
  return runtime;
}
