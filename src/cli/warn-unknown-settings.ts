import { describeUnknownSetting, findUnknownSettings } from '../config/unknown-settings.js';
import type { CliContext } from './context.js';

/**
 * At start-up of every command: one warning per variable that looks like a setting but is not one
 * (`unknown setting CHECKINS_LOOKBAK: did you mean CHECKINS_LOOKBACK?`). A JSON log line when the
 * configuration loads; a plain stderr line when it does not (its own error follows). Never throws.
 */
export function warnUnknownSettings(context: CliContext): void {
  const names = Object.keys(context.env).filter((name) => context.env[name] !== undefined);
  const unknown = findUnknownSettings(names, context.dotEnvNames);
  if (unknown.length === 0) return;
  let logger: ReturnType<CliContext['logger']> | undefined;
  try {
    logger = context.logger();
  } catch {
    logger = undefined;
  }
  for (const setting of unknown) {
    const text = describeUnknownSetting(setting);
    if (logger === undefined) context.stderr.write(`rewards-etl: warning: ${text}\n`);
    else
      logger.warn(
        {
          setting: setting.name,
          ...(setting.suggestion === undefined ? {} : { didYouMean: setting.suggestion }),
          source: setting.source,
        },
        text,
      );
  }
}
