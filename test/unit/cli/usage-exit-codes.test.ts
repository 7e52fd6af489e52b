import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import type { CliContext } from '../../../src/cli/context.js';
import { runCli } from '../../../src/cli/program.js';

function capture() {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
  return { out, text: () => text };
}

/** runCli in-process with no configuration: every case below must stop before reading any. */
async function run(args: string[]): Promise<{ code: number; stderr: string }> {
  const stdout = capture();
  const stderr = capture();
  const context: CliContext = {
    env: {},
    stdin: new PassThrough(),
    stdout: stdout.out,
    stderr: stderr.out,
    config: () => {
      throw new Error('a usage error must not read the configuration');
    },
    logger: () => {
      throw new Error('a usage error must not log');
    },
  };
  const code = await runCli(args, context);
  return { code, stderr: stderr.text() };
}

describe('usage errors exit 2 everywhere, with the usage line', () => {
  it.each([
    [['status', '--jsn'], 'usage: rewards-etl status [options]'],
    [['run'], 'usage: rewards-etl run [options] <stream...>'],
    [['run', 'bogus'], 'usage: rewards-etl run [options] <stream...>'],
    [['backfill'], 'usage: rewards-etl backfill [options]'],
    [['backfill', '--from', 'yesterday'], 'usage: rewards-etl backfill [options]'],
    [['members'], 'Usage: rewards-etl members [options] [command]'],
    [['auth'], 'Usage: rewards-etl auth [options] [command]'],
    [['members', 'import', '--bogus'], 'usage: rewards-etl members import [options]'],
    [['worker', '--shutdown-deadline', 'abc'], 'usage: rewards-etl worker [options]'],
    [['demo', '--check-ins', 'many'], 'usage: rewards-etl demo [options]'],
    [['--bogus'], 'usage: rewards-etl [options] [command]'],
  ])('rewards-etl %j exits 2 and prints the usage line', async (args, usage) => {
    const ran = await run(args);
    expect(ran.code).toBe(2);
    expect(ran.stderr).toContain(usage);
  });

  it('worker --shutdown-deadline abc names the option instead of silently using 30 s', async () => {
    const ran = await run(['worker', '--shutdown-deadline', 'abc']);
    expect(ran.stderr).toContain('--shutdown-deadline must be a number of seconds');
  });

  it('--help and --version still exit 0', async () => {
    expect((await run(['--help'])).code).toBe(0);
    expect((await run(['status', '--help'])).code).toBe(0);
    expect((await run(['--version'])).code).toBe(0);
  });
});
