import { existsSync } from 'node:fs';
import { config } from 'dotenv';

/** `.env` in the working directory, when present; real environment variables win. */
export function loadDotEnv(path = '.env'): void {
  if (existsSync(path)) config({ path, quiet: true });
}
