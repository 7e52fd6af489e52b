import { randomBytes } from 'node:crypto';
import { Command, InvalidArgumentError } from 'commander';
import type { CliContext } from '../context.js';
import { onInterrupt } from '../interrupt.js';

function wholeNumber(name: string) {
  return (text: string): number => {
    if (!/^\d+$/.test(text)) throw new InvalidArgumentError(`${name} must be a whole number`);
    return Number(text);
  };
}

export function simulatorCommand(context: CliContext): Command {
  return new Command('simulator')
    .description(
      'serve the bundled partner-API simulator and print its base URL and credentials (Ctrl-C stops it)',
    )
    .option('--port <n>', 'port to listen on (default: a free port)', wholeNumber('--port'))
    .option('--host <host>', 'address to listen on', '127.0.0.1')
    .option('--seed <s>', 'seed of the generated data (same seed, same data)', wholeNumber('--seed'), 42)
    .option('--check-ins <n>', 'number of check-ins to generate', wholeNumber('--check-ins'), 20_000)
    .option('--days <n>', 'length of the generated period, ending now', wholeNumber('--days'), 30)
    .option('--live', 'keep adding check-ins and ending visits as time passes')
    .action(
      async (options: {
        port?: number;
        host: string;
        seed: number;
        checkIns: number;
        days: number;
        live?: boolean;
      }) => {
        const { formatSimulatorBanner, startSimulator } = await import('../../simulator/index.js');
        const sim = await startSimulator({
          host: options.host,
          seed: options.seed,
          checkIns: options.checkIns,
          days: options.days,
          live: options.live === true,
          ...(options.port === undefined ? {} : { port: options.port }),
        });
        context.stdout.write(formatSimulatorBanner(sim));
        // Not the simulator's: our own key for encrypting OAuth tokens at rest, so the lines above
        // paste into a .env that works as is.
        context.stdout.write(`TOKEN_ENCRYPTION_KEY=${randomBytes(32).toString('base64')}\n`);
        await new Promise<void>((resolve) => {
          const detach = onInterrupt(() => {
            detach();
            void sim.close().finally(resolve);
          });
        });
      },
    );
}
