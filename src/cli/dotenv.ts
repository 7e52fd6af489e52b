import { existsSync } from 'node:fs';
import { config } from 'dotenv';

/**
 * `.env` in the working directory, when present; real environment variables win. Returns the
 * names `.env` set, so an unknown setting's warning can say where it came from.
 */
export function loadDotEnv(path = '.env'): Set<string> {
  if (!existsSync(path)) return new Set();
  return new Set(Object.keys(config({ path, quiet: true }).parsed ?? {}));
}
