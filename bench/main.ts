// `npm run bench`: runs every benchmark script present in bench/, one after another (they must
// not share the machine's two cores), passing `--full` through, with their output shown as it
// comes. Exits 1 only when a bench crashes; a missed goal is a finding, not a failure.
//
//   npm run bench [-- --full]

import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'checkins.ts',
  'rate-limit.ts',
  'alert-latency.ts',
  'scale.ts',
  // Before freshness.ts, which takes the feed's lag and paid-alert latency from its result.
  'full-world.ts',
  'freshness.ts',
] as const;
// Arguments a bench gets in `npm run bench` without --full: the scale bench's own default (5 M
// rows) takes too long beside the others.
const QUICK_ARGS: Partial<Record<(typeof BENCHES)[number], string[]>> = { 'scale.ts': ['--rows', '1000000'] };

function runBench(path: string, args: readonly string[]): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', path, ...args], { stdio: 'inherit' });
    child.once('error', reject);
    child.once('exit', (code, signal) => resolve(signal === null ? code : null));
  });
}

async function main(): Promise<number> {
  const full = process.argv.includes('--full');
  const crashed: string[] = [];
  for (const name of BENCHES) {
    const path = fileURLToPath(new URL(`./${name}`, import.meta.url));
    if (!existsSync(path)) {
      process.stdout.write(`\n=== bench/${name}: not present, skipped\n`);
      continue;
    }
    process.stdout.write(`\n=== bench/${name}${full ? ' --full' : ''}\n`);
    const started = performance.now();
    const code = await runBench(path, full ? ['--full'] : (QUICK_ARGS[name] ?? []));
    const took = ((performance.now() - started) / 1000).toFixed(0);
    if (code === 0) process.stdout.write(`=== bench/${name}: done in ${took} s\n`);
    else {
      crashed.push(name);
      process.stdout.write(`=== bench/${name}: CRASHED (exit ${code ?? 'by signal'}) after ${took} s\n`);
    }
  }
  if (crashed.length > 0)
    process.stdout.write(`\n${crashed.length} bench(es) crashed: ${crashed.join(', ')}\n`);
  return crashed.length > 0 ? 1 : 0;
}

process.exitCode = await main();
