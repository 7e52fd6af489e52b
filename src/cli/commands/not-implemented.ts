import { Command } from 'commander';
import { CliExit, ExitCode } from '../exit-codes.js';

// Commands of the contract whose issue has not landed yet: present in --help, honest when run.
const PENDING: Array<{ usage: string; description: string; options?: Array<[string, string]> }> = [
  {
    usage: 'worker',
    description: 'long-running: register job schedules, process jobs, serve /healthz, /metrics and the status page on HTTP_PORT',
  },
  {
    usage: 'run <stream...>',
    description:
      'one full pass of the named streams in the foreground, then exit: restaurants, checkins, locations, challenges, balance, payment_intents, alerts, or all',
  },
  {
    usage: 'backfill',
    description: 'plan and enqueue check-in windows for a historical range',
    options: [
      ['--from <iso>', 'start of the range (inclusive), ISO 8601'],
      ['--to <iso>', 'end of the range (exclusive), ISO 8601; default now minus CHECKINS_SAFETY_LAG'],
      ['--wait', 'show progress until every window is done'],
    ],
  },
  {
    usage: 'verify',
    description: "compare each completed check-in window's warehouse count with the API's total_count; exit 3 on mismatch",
    options: [
      ['--from <iso>', 'only windows starting at or after this instant'],
      ['--to <iso>', 'only windows ending at or before this instant'],
      ['--repair', 're-queue the windows that differ'],
    ],
  },
  {
    usage: 'status',
    description: 'watermark and lag, windows by state, queue depths, last run per stream, open intents, alerts, rejected records',
    options: [['--json', 'machine-readable output']],
  },
  {
    usage: 'simulator',
    description: 'serve the bundled partner-API simulator and print its base URL and credentials',
    options: [
      ['--port <n>', 'port to listen on (default: a free port)'],
      ['--seed <s>', 'seed of the generated data'],
      ['--check-ins <n>', 'number of check-ins to generate'],
      ['--live', 'keep adding check-ins and ending visits as time passes'],
    ],
  },
  {
    usage: 'demo',
    description: 'the whole pipeline once on the bundled simulator, with no configuration, then a summary',
  },
  {
    usage: 'auth',
    description: 'OAuth helpers: authorize URL with PKCE, code exchange, importing a refresh token',
  },
];

export function notImplementedCommands(): Command[] {
  return PENDING.map(({ usage, description, options = [] }) => {
    const command = new Command().name(usage.split(' ')[0] ?? usage).description(description);
    const args = usage.split(' ').slice(1).join(' ');
    if (args !== '') command.arguments(args);
    for (const [flags, help] of options) command.option(flags, help);
    return command.action(() => {
      throw new CliExit(ExitCode.failed, `${command.name()}: not implemented yet`);
    });
  });
}
