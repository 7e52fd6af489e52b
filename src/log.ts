import {
  pino,
  type Bindings,
  type ChildLoggerOptions,
  type DestinationStream,
  type LevelWithSilent,
  type Logger,
} from 'pino';
import { createRequire } from 'node:module';

// pino-pretty is for a person at a terminal: loaded only then (9 MB of RSS a worker writing JSON
// lines does not need, issue 39). It is a CommonJS package, so `require` loads it synchronously.
const require = createRequire(import.meta.url);
type PinoPretty = typeof import('pino-pretty');

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
  /** Pretty output for people; defaults to whether stderr (where logs go) is a terminal. */
  pretty?: boolean;
  /** Colours in pretty output; off with NO_COLOR (https://no-color.org) or when stderr is not a terminal. */
  color?: boolean;
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
  const pretty = options.pretty ?? (options.destination === undefined && process.stderr.isTTY);
  const colorize = pretty && (options.color ?? process.stderr.isTTY);
  const base = {
    level: options.level,
    serializers: { err: errorSerializer(options.level) },
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    hooks: { streamWrite: scrub },
  };
  if (pretty) {
    // In this thread (not a transport's worker): a progress bar's terminal sink sees every line.
    const pinoPretty = require('pino-pretty') as PinoPretty;
    const stream = pinoPretty({ colorize, destination: options.destination ?? 2, sync: true });
    return withMergedChildBindings(pino(base, stream));
  }
  return withMergedChildBindings(
    pino(base, options.destination ?? pino.destination({ dest: 2, sync: false })),
  );
}

/** NO_COLOR set to anything but the empty string turns colours off (https://no-color.org). */
export function colorAllowed(env: Record<string, string | undefined>): boolean {
  return env.NO_COLOR === undefined || env.NO_COLOR === '';
}

/**
 * How logs look: pretty for a person when stderr (where they go) is a terminal, JSON lines
 * otherwise; colours only on a terminal and without NO_COLOR.
 */
export function logStyle(
  stderrIsTerminal: boolean,
  env: Record<string, string | undefined>,
): { pretty: boolean; color: boolean } {
  return { pretty: stderrIsTerminal, color: stderrIsTerminal && colorAllowed(env) };
}

/**
 * pino appends a child's bindings to its parent's, so a key bound twice appeared twice in one line
 * (`"stream":"payment_intents","stream":"alerts"`: alert delivery inside an intents tick), which
 * JSON parsers resolve differently. A child that rebinds a key is made from the root with the
 * bindings merged instead: the inner value wins, each key appears once.
 */
function withMergedChildBindings(root: Logger): Logger {
  // pino's own method (a child inherits its parent's properties, the patched `child` included).
  // eslint-disable-next-line @typescript-eslint/unbound-method -- called with the logger as `this`
  const pinoChild = root.child as unknown as (
    this: Logger,
    bindings: Bindings,
    options?: ChildLoggerOptions,
  ) => Logger;
  const patch = (logger: Logger): Logger => {
    logger.child = ((bindings: Bindings, childOptions?: ChildLoggerOptions) => {
      const current = logger.bindings();
      const rebinds = Object.keys(bindings).some((key) => key in current);
      return patch(
        rebinds
          ? pinoChild.call(root, { ...current, ...bindings }, childOptions)
          : pinoChild.call(logger, bindings, childOptions),
      );
    }) as unknown as Logger['child'];
    return logger;
  };
  return patch(root);
}
