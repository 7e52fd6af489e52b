import { randomBytes } from 'node:crypto';
import { Command } from 'commander';
import { wholeNumberOption } from '../parse-options.js';
import type { CliContext } from '../context.js';
import { CliExit, ExitCode } from '../exit-codes.js';
import { onInterrupt } from '../interrupt.js';
import type { WorldFlags } from '../../simulator/simulator-flags.js';
import { DEFAULT_SIMULATOR_PORT } from '../../simulator/default-port.js';

const wholeNumber = wholeNumberOption;

export function simulatorCommand(context: CliContext): Command {
  return new Command('simulator')
    .description(
      'serve the bundled partner-API simulator and print its base URL and credentials (Ctrl-C stops it)',
    )
    .option(
      '--port <n>',
      'port to listen on (0: any free port)',
      wholeNumber('--port'),
      DEFAULT_SIMULATOR_PORT,
    )
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <s>', 'seed of the generated data (same seed, same data)', wholeNumber('--seed'), 42)
    .option('--check-ins <n>', 'number of check-ins to generate', wholeNumber('--check-ins'), 20_000)
    .option('--days <n>', 'length of the generated period, ending now', wholeNumber('--days'), 30)
    .option('--live', 'keep adding check-ins and ending visits as time passes')
    .option(
      '--world <size>',
      'fixture (24 restaurants, 4 members) or production (5,000 restaurants, 20,000 locations, 10,000 challenges, 10,000 members, 1,000 open intents)',
      'fixture',
    )
    .option('--restaurants <n>', 'number of restaurants', wholeNumber('--restaurants'))
    .option(
      '--locations <n>',
      'number of locations (at least one per restaurant)',
      wholeNumber('--locations'),
    )
    .option('--challenges <n>', 'number of challenges', wholeNumber('--challenges'))
    .option('--members <n>', 'number of connected members (at least 4)', wholeNumber('--members'))
    .option('--open-intents <n>', 'number of pending payment intents', wholeNumber('--open-intents'))
    .option('--changes', 'the world changes by itself as simulated time passes (docs/simulator.md)')
    .option(
      '--change <name=value>',
      'one rate of the change model, e.g. statusEveryMs=3d (repeatable; implies --changes)',
      (value: string, previous: string[] = []) => [...previous, value],
    )
    .option('--time-scale <x>', 'simulated time runs x times as fast as real time (1440: a day a minute)')
    .option(
      '--rhythm <daily|flat>',
      'how visits spread over a local day: lunch and dinner peaks, or even (default $SIMULATOR_RHYTHM, else daily)',
    )
    .action((options: SimulatorFlags) => serveSimulator(context, options));
}

interface SimulatorFlags extends WorldFlags {
  port: number;
  host: string;
  seed: number;
  checkIns: number;
  days: number;
  live?: boolean;
  world: string;
}

/** Starts the simulator, prints its banner and serves until Ctrl-C. */
async function serveSimulator(context: CliContext, options: SimulatorFlags): Promise<void> {
  const { formatSimulatorBanner, startSimulator, worldOptionsFromFlags } =
    await import('../../simulator/index.js');
  let world: ReturnType<typeof worldOptionsFromFlags>;
  try {
    world = worldOptionsFromFlags(options);
  } catch (error) {
    if (error instanceof RangeError) throw new CliExit(ExitCode.usage, error.message);
    throw error;
  }
  const sim = await startSimulator({
    host: options.host,
    seed: options.seed,
    checkIns: options.checkIns,
    days: options.days,
    live: options.live === true,
    size: world.size,
    changes: world.changes,
    timeScale: world.timeScale,
    ...(world.rhythm ? { rhythm: world.rhythm } : {}),
    port: options.port,
  }).catch((error: unknown) => {
    if ((error as { code?: unknown }).code !== 'EADDRINUSE') throw error;
    throw new CliExit(
      ExitCode.failed,
      `port ${options.port} on ${options.host} is in use (another simulator?): stop it, or pass --port N (--port 0: any free port; the .env printed then changes on every start)`,
    );
  });
  context.stdout.write(formatSimulatorBanner(sim));
  // Not the simulator's: our own key for encrypting OAuth tokens at rest, so the lines above
  // paste into a .env that works as is. Keep the first one pasted: tokens stored under it are
  // unreadable with another.
  context.stdout.write(`TOKEN_ENCRYPTION_KEY=${randomBytes(32).toString('base64')}\n`);
  await new Promise<void>((resolve) => {
    const detach = onInterrupt(() => {
      detach();
      void sim.close().finally(resolve);
    });
  });
}
