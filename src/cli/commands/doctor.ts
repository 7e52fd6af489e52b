import { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliExit } from '../exit-codes.js';

export function doctorCommand(context: CliContext): Command {
  return new Command('doctor')
    .description(
      'check the configuration, Postgres, Redis, the partner API (User-Agent, key scopes, clock), OAuth and the webhook; one line per check; exit 0 all good, 1 a check failed, 2 bad configuration',
    )
    .option('--json', 'print the checks as JSON on stdout')
    .action(async (options: { json?: boolean }) => {
      const { checkConfiguration } = await import('../../doctor/run-doctor.js');
      const { renderDoctorText } = await import('../../doctor/doctor-report.js');
      const { findUnknownSettings } = await import('../../config/unknown-settings.js');
      const { withSettingWarnings } = await import('../../doctor/setting-warnings.js');
      const checked = checkConfiguration(() => context.config());
      const report = withSettingWarnings(
        'report' in checked ? checked.report : await probeEverything(context),
        findUnknownSettings(
          Object.keys(context.env).filter((name) => context.env[name] !== undefined),
          context.dotEnvNames,
        ),
      );
      context.stdout.write(
        options.json === true ? `${JSON.stringify(report, null, 2)}\n` : renderDoctorText(report),
      );
      if (report.exitCode !== 0) throw new CliExit(report.exitCode, '');
    });
}

async function probeEverything(context: CliContext) {
  const { createOneShotClient } = await import('../../redis/connection.js');
  const { createHttpTransport, transportOptionsFrom } = await import('../../api/http-transport.js');
  const { runDoctorChecks } = await import('../../doctor/run-doctor.js');
  const { PROBE_TIMEOUT_MS } = await import('../../doctor/probes.js');
  const { createDatabase } = await import('../../warehouse/database.js');
  const config = context.config();
  const logger = context.logger();
  const db = createDatabase({
    url: config.databaseUrl.reveal(),
    maxConnections: 3,
    applicationName: 'rewards-etl doctor',
  });
  const { redis, lastError: redisError } = createOneShotClient(config.redis, logger);
  const transport = createHttpTransport({
    ...transportOptionsFrom(config.api),
    timeoutMs: Math.min(config.api.requestTimeoutMs, PROBE_TIMEOUT_MS),
  });
  try {
    await redis.connect().catch(() => undefined); // the Redis check reports why
    return await runDoctorChecks({
      config,
      db,
      redis,
      redisConnectError: redisError,
      transport,
      logger,
    });
  } finally {
    redis.disconnect();
    await transport.close();
    await db.destroy();
  }
}
