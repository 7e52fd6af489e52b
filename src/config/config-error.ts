/** A bad setting: the CLI exits 2 with this message, which names the variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`${variable}: ${problem}`);
  }
}
