import { type Config } from '../../src/config/config.js';
import { secretValues } from '../../src/config/secret-values.js';
import { createLogger, type Logger } from '../../src/log.js';

/** The pipeline's logger for a bench: plain JSON on stderr (stdout is the report), secrets redacted. */
export function benchLogger(config: Config, level: 'error' | 'warn' = 'error'): Logger {
  return createLogger({ level, pretty: false, secrets: secretValues(config), destination: process.stderr });
}
