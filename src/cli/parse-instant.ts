import { CliExit, ExitCode } from './exit-codes.js';

/** An ISO 8601 instant given on the command line; bad input is a usage error naming the option. */
export function parseInstant(option: string, text: string): Date {
  const date = new Date(text);
  if (!/^\d{4}-\d{2}-\d{2}/.test(text) || Number.isNaN(date.getTime())) {
    throw new CliExit(
      ExitCode.usage,
      `${option}: "${text}" is not an ISO 8601 date-time (e.g. 2026-11-01T00:00:00Z)`,
    );
  }
  return date;
}
