import { createInterface } from 'node:readline';

/** Standard input as the CLI sees it: a pipe, a file, or a terminal. */
export type CliInput = NodeJS.ReadableStream & { isTTY?: boolean };

/**
 * Reads up to `prompts.length` non-empty lines (trimmed) from standard input: one secret a line.
 * On a terminal each line is asked for on stderr; from a pipe the lines are read as they come.
 * Fewer lines at end of input give a shorter array. Secrets read this way never show in `ps`
 * output or shell history, unlike command-line flags.
 */
export async function readSecretLines(
  input: CliInput,
  prompts: readonly string[],
  stderr: NodeJS.WritableStream,
): Promise<string[]> {
  const lines = createInterface({ input, terminal: false, crlfDelay: Number.POSITIVE_INFINITY });
  const values: string[] = [];
  const ask = () => {
    if (input.isTTY === true && values.length < prompts.length) stderr.write(prompts[values.length] ?? '');
  };
  try {
    ask();
    for await (const line of lines) {
      const value = line.trim();
      if (value === '') {
        ask();
        continue;
      }
      values.push(value);
      if (values.length === prompts.length) break;
      ask();
    }
  } finally {
    lines.close();
  }
  return values;
}

/** The note printed when a secret comes from a flag: it still works, for now. */
export function deprecatedSecretFlag(flag: string, instead: string): string {
  return (
    `rewards-etl: warning: ${flag} is deprecated: it leaves the secret in \`ps\` output and shell ` +
    `history; ${instead}\n`
  );
}
