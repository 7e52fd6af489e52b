import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { migrateCommand } from './commands/migrate.js';
import { notImplementedCommands } from './commands/not-implemented.js';

/** Every command of CONTRACT.md, in the order `--help` lists them. */
export function registerCommands(program: Command, context: CliContext): void {
  program.addCommand(migrateCommand(context));
  for (const command of notImplementedCommands()) program.addCommand(command);
}
