import { loadConfig, type Config } from '../config/config.js';
import { secretValues } from '../config/secret-values.js';
import { createLogger, logStyle, type Logger } from '../log.js';
import type { CliInput } from './read-secret.js';
import { createTerminalSink, type TerminalSink } from './terminal.js';

/** What every command gets: the environment it runs in, its output streams, and lazy config. */
export interface CliContext {
  env: Record<string, string | undefined>;
  /** Names `.env` set (they are in `env` too): an unknown setting's warning says where it came from. */
  dotEnvNames?: ReadonlySet<string>;
  /** Where secrets are read from (`auth import`, `auth exchange`), never from flags. */
  stdin: CliInput;
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  /** Where log lines go (stderr): a progress bar registers here so logs print above it. */
  terminal?: TerminalSink;
  /** Parses the environment on first use; throws ConfigError (exit 2) naming a bad variable. */
  config(): Config;
  logger(): Logger;
}

export function createCliContext(
  env: Record<string, string | undefined>,
  options: { dotEnvNames?: ReadonlySet<string> } = {},
): CliContext {
  let config: Config | undefined;
  let logger: Logger | undefined;
  const context: CliContext = {
    env,
    ...(options.dotEnvNames === undefined ? {} : { dotEnvNames: options.dotEnvNames }),
    stdin: process.stdin,
    stdout: process.stdout,
    stderr: process.stderr,
    terminal: createTerminalSink(process.stderr),
    config() {
      config ??= loadConfig(env);
      return config;
    },
    logger() {
      const current = context.config();
      logger ??= createLogger({
        level: current.logLevel,
        secrets: secretValues(current),
        ...logStyle(process.stderr.isTTY, env),
        ...(context.terminal === undefined ? {} : { destination: context.terminal }),
      });
      return logger;
    },
  };
  return context;
}
