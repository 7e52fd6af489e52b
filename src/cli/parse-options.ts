import { InvalidArgumentError, type Command } from 'commander';
import type { CliContext } from './context.js';

/**
 * Commander settings every command needs, applied to the whole tree: `addCommand` does not copy
 * them from the parent (only `.command()` does), so without this a subcommand's usage error called
 * `process.exit(1)` itself instead of ending through runCli as exit 2.
 */
export function applyUsageSettings(command: Command, context: Pick<CliContext, 'stdout' | 'stderr'>): void {
  command
    .exitOverride()
    .configureOutput({
      writeOut: (text) => context.stdout.write(text),
      writeErr: (text) => context.stderr.write(text),
    })
    .showHelpAfterError(
      `usage: ${commandPath(command)} ${command.usage()}\n(run ${commandPath(command)} --help for more)`,
    );
  for (const sub of command.commands) applyUsageSettings(sub, context);
}

/** `usage: rewards-etl run [options] <stream...> (rewards-etl run --help for more)`. */
export function usageLine(command: Command): string {
  const path = commandPath(command);
  return `usage: ${path} ${command.usage()} (${path} --help for more)`;
}

function commandPath(command: Command): string {
  const names: string[] = [];
  for (let at: Command | null = command; at !== null; at = at.parent) names.unshift(at.name());
  return names.join(' ');
}

/** A whole number of seconds (`30`) or a duration (`90s`, `2m`); anything else is a usage error. */
export function secondsOption(option: string) {
  return (text: string): number => {
    const match = /^(\d+(?:\.\d+)?)(s|m)?$/.exec(text.trim());
    if (match === null) throw new InvalidArgumentError(`${option} must be a number of seconds (e.g. 30)`);
    return Number(match[1]) * (match[2] === 'm' ? 60 : 1);
  };
}

/** A whole number (`--check-ins 30000`); anything else is a usage error naming the option. */
export function wholeNumberOption(option: string) {
  return (text: string): number => {
    if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`${option} must be a whole number`);
    return Number(text);
  };
}
