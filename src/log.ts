import { pino, type Logger, type DestinationStream, type LevelWithSilent } from 'pino';

export type { Logger } from 'pino';

/** Paths pino blanks before serializing; the scrubber below is the second line of defence. */
const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'clientSecret',
  '*.clientSecret',
  'accessToken',
  '*.accessToken',
  'refreshToken',
  '*.refreshToken',
  'webhookSecret',
  '*.webhookSecret',
  'password',
  '*.password',
  'headers.authorization',
  'headers["x-api-key"]',
  '*.headers.authorization',
  '*.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers["x-api-key"]',
];

export interface LoggerOptions {
  level: LevelWithSilent;
  /** Known secret values: any occurrence in a log line is replaced, whatever field carried it. */
  secrets?: readonly string[];
  /** Pretty output for people; defaults to whether stdout is a TTY. */
  pretty?: boolean;
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions): Logger {
  const secrets = (options.secrets ?? []).filter((value) => value.length > 0);
  const scrub = (line: string): string =>
    secrets.reduce((text, value) => text.split(value).join('[redacted]'), line);
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY);
  const base = {
    level: options.level,
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: { streamWrite: scrub },
  };
  if (pretty) {
    return pino({
      ...base,
      transport: { target: 'pino-pretty', options: { colorize: true, destination: 2 } },
    });
  }
  return pino(base, options.destination ?? pino.destination({ dest: 2, sync: false }));
}
