import { Command, CommanderError } from 'commander';
import { ConfigError } from '../config/config-error.js';
import { packageVersion } from '../package-info.js';
import { stripControlCharacters } from '../terminal-text.js';
import { CliExit, ExitCode } from './exit-codes.js';
import type { CliContext } from './context.js';
import { registerCommands } from './commands.js';
import { warnUnknownSettings } from './warn-unknown-settings.js';
import { applyUsageSettings, usageLine } from './parse-options.js';

export function buildProgram(context: CliContext): Command {
  const program = new Command('rewards-etl')
    .description('Mirror the dining-rewards partner API into a Postgres warehouse (schema "rewards").')
    .version(packageVersion())
    .addHelpText(
      'after',
      '\nConfiguration comes from the environment (.env is read when present); see README.md.\n' +
        'Exit codes: 0 success, 1 the work failed, 2 bad usage or configuration, 3 verify found a mismatch.',
    );
  registerCommands(program, context);
  applyUsageSettings(program, context);
  return program;
}

/** Runs the CLI and returns the exit code; never calls process.exit itself (tests call this). */
export async function runCli(argv: string[], context: CliContext): Promise<number> {
  const program = buildProgram(context);
  let running: Command = program;
  program.hook('preAction', (_program, actionCommand) => {
    running = actionCommand;
    warnUnknownSettings(context);
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ExitCode.ok;
  } catch (error) {
    const code = exitCodeFor(error, context);
    // A usage error a command finds itself (an unknown stream, a bad date) shows the usage line too.
    if (error instanceof CliExit && code === ExitCode.usage) context.stderr.write(`${usageLine(running)}\n`);
    return code;
  }
}

/** Prints what went wrong (control characters stripped) and gives the exit code for it. */
export function exitCodeFor(error: unknown, context: Pick<CliContext, 'stderr'>): number {
  if (error instanceof CommanderError) {
    // --help and --version end through here with exit code 0.
    return error.exitCode === 0 ? ExitCode.ok : ExitCode.usage;
  }
  if (error instanceof ConfigError) {
    context.stderr.write(`rewards-etl: configuration error: ${error.message}\n`);
    return ExitCode.usage;
  }
  if (error instanceof CliExit) {
    if (error.message !== '') context.stderr.write(`rewards-etl: ${stripControlCharacters(error.message)}\n`);
    return error.code;
  }
  // The message may carry partner text (an error envelope, a record id): no escape sequences.
  const message = error instanceof Error ? error.message : String(error);
  context.stderr.write(`rewards-etl: ${stripControlCharacters(message)}\n`);
  return ExitCode.failed;
}
