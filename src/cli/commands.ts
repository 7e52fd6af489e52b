import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { authCommand } from './commands/auth.js';
import { backfillCommand } from './commands/backfill.js';
import { demoCommand } from './commands/demo.js';
import { doctorCommand } from './commands/doctor.js';
import { membersCommand } from './commands/members.js';
import { migrateCommand } from './commands/migrate.js';
import { resyncCommand } from './commands/resync.js';
import { planCommand } from './commands/plan.js';
import { runCommand } from './commands/run.js';
import { simulatorCommand } from './commands/simulator.js';
import { statusCommand } from './commands/status.js';
import { verifyCommand } from './commands/verify.js';
import { workerCommand } from './commands/worker.js';

/** Every command of the README's table, in the order `--help` lists them. */
export function registerCommands(program: Command, context: CliContext): void {
  for (const command of [
    migrateCommand,
    workerCommand,
    runCommand,
    backfillCommand,
    resyncCommand,
    verifyCommand,
    statusCommand,
    planCommand,
    doctorCommand,
    simulatorCommand,
    demoCommand,
    authCommand,
    membersCommand,
  ]) {
    program.addCommand(command(context));
  }
}
