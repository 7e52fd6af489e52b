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

const DEBUG_LEVELS: ReadonlySet<LevelWithSilent> = new Set(['debug', 'trace']);

/**
 * Errors as one JSON object (type, message, code), their stack (and their causes' stacks) only at
 * LOG_LEVEL=debug or trace: an operator reading `journalctl -o cat | jq` wants the cause, not the
 * frames of ioredis or pg.
 */
export function errorSerializer(level: LevelWithSilent): (error: unknown) => unknown {
  const keepStacks = DEBUG_LEVELS.has(level);
  const strip = (value: unknown, depth: number): unknown => {
    if (value === null || typeof value !== 'object' || depth > 5) return value;
    if (Array.isArray(value)) return value.map((item) => strip(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) {
      if (key === 'stack') continue;
      out[key] = strip(inner, depth + 1);
    }
    return out;
  };
  return (error: unknown) => {
    const serialized = error instanceof Error ? pino.stdSerializers.err(error) : error;
    return keepStacks ? serialized : strip(serialized, 0);
  };
}

export function createLogger(options: LoggerOptions): Logger {
  const secrets = (options.secrets ?? []).filter((value) => value.length > 0);
  const scrub = (line: string): string =>
    secrets.reduce((text, value) => text.split(value).join('[redacted]'), line);
  const pretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY);
  const base = {
    level: options.level,
    serializers: { err: errorSerializer(options.level) },
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
