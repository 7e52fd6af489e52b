import { Command } from 'commander';
import type { CliContext } from '../context.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { wholeNumberOption } from '../parse-options.js';

export function demoCommand(context: CliContext): Command {
  return new Command('demo')
    .description(
      "the whole pipeline once, end to end, with no configuration: the simulator in-process, a fresh rewards_etl_demo database, every stream, a summary and four analytics answers by SQL (busiest restaurants, pay-enabled share, median visit by cohort, members' visits by tier)",
    )
    .option('--check-ins <n>', 'check-ins the simulator generates', wholeNumberOption('--check-ins'), 30_000)
    .action(async (options: { checkIns: number }) => {
      const { runDemo } = await import('../../demo/run-demo.js');
      // Only where Postgres and Redis are is read from the environment; everything else is the demo's own.
      const config = context.config();
      const { ok } = await runDemo({
        databaseUrl: config.databaseUrl.reveal(),
        redis: config.redis,
        out: context.stdout,
        checkIns: options.checkIns,
      });
      if (!ok) throw new CliExit(ExitCode.failed, 'the demo finished with errors (see above)');
    });
}
