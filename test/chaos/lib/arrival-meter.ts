import { spawn } from 'node:child_process';

const ROOT = new URL('../../../', import.meta.url).pathname;
const CHILD = new URL('./arrival-meter-child.ts', import.meta.url).pathname;

export interface ArrivalMeter {
  /** The simulator's base URL as seen through the meter (`…/v1`). */
  baseUrl: string;
  /** Arrival times (ms) of the requests so far, in order. */
  arrivals(): number[];
  clear(): void;
  close(): Promise<void>;
}

/**
 * Measures the rate the workers send at: every partner-API request goes through a proxy process
 * that stamps its arrival. (The simulator's own log stamps a request when its answer is ready, so
 * answers held up by a busy test process bunch together there.)
 */
export async function startArrivalMeter(simBaseUrl: string): Promise<ArrivalMeter> {
  const origin = new URL(simBaseUrl).origin;
  // At a higher priority where allowed (root): on a busy machine a stamp should be taken when the
  // request arrives, not when the scheduler next gets round to the meter.
  const command = [process.execPath, '--import', 'tsx', CHILD, origin];
  const child =
    process.getuid?.() === 0
      ? spawn('nice', ['-n', '-10', ...command], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
      : spawn(command[0]!, command.slice(1), { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  let stamps: number[] = [];
  let partial = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`arrival meter exited with ${code}`)));
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        const [kind, value] = line.split(' ');
        if (kind === 'listening') resolve(Number(value));
        else if (kind === 'arrival') stamps.push(Number(value));
      }
    });
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  return {
    baseUrl: `http://127.0.0.1:${port}${new URL(simBaseUrl).pathname}`,
    arrivals: () => [...stamps],
    clear: () => {
      stamps = [];
    },
    async close() {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
