import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CliExit, ExitCode } from '../../../src/cli/exit-codes.js';
import { exitCodeFor } from '../../../src/cli/program.js';

function stderr() {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { out, text: () => text };
}

describe('CLI error output', () => {
  it('strips control characters from error messages: partner text cannot drive the terminal', () => {
    const err = stderr();
    const code = exitCodeFor(new Error('partner said \u001b[2J\u001b]0;owned\u0007 bad\u202e request'), {
      stderr: err.out,
    });
    expect(code).toBe(ExitCode.failed);
    expect(err.text()).toBe('rewards-etl: partner said [2J]0;owned bad request\n');
    expect([...err.text().slice(0, -1)].every((c) => c >= ' ' && c !== '\u202e')).toBe(true);
  });

  it('does the same for a CliExit message and keeps its exit code', () => {
    const err = stderr();
    expect(
      exitCodeFor(new CliExit(ExitCode.verifyMismatch, 'window \u001b[31mfailed'), { stderr: err.out }),
    ).toBe(3);
    expect(err.text()).toBe('rewards-etl: window [31mfailed\n');
  });
});
