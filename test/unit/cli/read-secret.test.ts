import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { readSecretLines, type CliInput } from '../../../src/cli/read-secret.js';

function capture() {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { out, text: () => text };
}

describe('reading secrets from standard input', () => {
  it('on a terminal, asks for each secret and never echoes what is typed', async () => {
    const rawModes: boolean[] = [];
    const input = Object.assign(new PassThrough(), {
      isTTY: true,
      setRawMode(mode: boolean) {
        rawModes.push(mode);
        return this;
      },
    }) as CliInput;
    const stderr = capture();
    const reading = readSecretLines(input, ['code: ', 'verifier: '], stderr.out);
    (input as PassThrough).write('typed-code-123\r');
    (input as PassThrough).write('typed-verifier-456\r');
    expect(await reading).toEqual(['typed-code-123', 'typed-verifier-456']);
    expect(stderr.text()).toContain('code: ');
    expect(stderr.text()).toContain('verifier: ');
    expect(stderr.text()).not.toContain('typed-');
    expect(rawModes[0]).toBe(true); // the terminal's own echo is off while reading
  });

  it('from a pipe, reads the lines as they come, skipping blank ones, with no prompt', async () => {
    const input = new PassThrough();
    const stderr = capture();
    input.end('\n  first-secret  \nsecond-secret\nignored\n');
    expect(await readSecretLines(input, ['a: ', 'b: '], stderr.out)).toEqual([
      'first-secret',
      'second-secret',
    ]);
    expect(stderr.text()).toBe('');
  });

  it('at end of input gives fewer lines than asked for', async () => {
    const input = new PassThrough();
    input.end('only-one\n');
    expect(await readSecretLines(input, ['a: ', 'b: '], capture().out)).toEqual(['only-one']);
  });
});
