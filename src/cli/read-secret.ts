import { createInterface } from 'node:readline';
import { Writable } from 'node:stream';

/** Standard input as the CLI sees it: a pipe, a file, or a terminal. */
export type CliInput = NodeJS.ReadableStream & { isTTY?: boolean };

/**
 * Reads up to `prompts.length` non-empty lines (trimmed) from standard input: one secret a line.
 * On a terminal each line is asked for on stderr and not echoed; from a pipe the lines are read as
 * they come.
 * Fewer lines at end of input give a shorter array. Secrets read this way never show in `ps`
 * output or shell history, unlike command-line flags.
 */
export async function readSecretLines(
  input: CliInput,
  prompts: readonly string[],
  stderr: NodeJS.WritableStream,
): Promise<string[]> {
  // On a terminal readline takes raw mode (the terminal stops echoing) and would echo each key
  // to `output` itself: a muted output keeps the secret off the screen.
  const onTerminal = input.isTTY === true;
  const lines = createInterface({
    input,
    ...(onTerminal ? { output: mutedOutput(), terminal: true } : { terminal: false }),
    crlfDelay: Number.POSITIVE_INFINITY,
  });
  const values: string[] = [];
  const ask = () => {
    if (onTerminal && values.length < prompts.length) stderr.write(prompts[values.length] ?? '');
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

function mutedOutput(): Writable {
  return new Writable({
    write(_chunk, _encoding, done) {
      done();
    },
  });
}
