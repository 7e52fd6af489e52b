/** Exit codes promised to users (docs/contract.md). */
export const ExitCode = {
  ok: 0,
  failed: 1,
  usage: 2,
  verifyMismatch: 3,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** Thrown by a command to end the process with a given code and a message for the user. */
export class CliExit extends Error {
  override readonly name = 'CliExit';
  constructor(
    readonly code: ExitCode,
    message: string,
  ) {
    super(message);
  }
}
