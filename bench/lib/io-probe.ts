import { Redis } from 'ioredis';
import pg from 'pg';

// Where a sequential pipeline waits: wraps pg's Client#query and ioredis's sendCommand in this
// process to count calls and sum the time until each answer. The pipeline pages one window at a
// time, so these sums do not overlap and "elapsed − Postgres − Redis" is HTTP, parsing and JS.
// Bench-only instrumentation; the wrappers cost a timer read per call.

export interface IoTotals {
  postgresQueries: number;
  /** Explicit COMMITs (page transactions); single statements outside a transaction commit too. */
  postgresCommits: number;
  postgresMs: number;
  redisCommands: number;
  redisMs: number;
}

type AnyFunction = (this: unknown, ...args: unknown[]) => unknown;

function timed(target: object, method: string, record: (ms: number, args: unknown[]) => void): void {
  const holder = target as Record<string, AnyFunction>;
  const original = holder[method];
  if (original === undefined) throw new Error(`nothing to wrap at ${method}`);
  holder[method] = function (this: unknown, ...args: unknown[]) {
    const started = performance.now();
    const result = original.apply(this, args);
    const done = () => record(performance.now() - started, args);
    if (result instanceof Promise) result.then(done, done);
    else done();
    return result;
  };
}

export function installIoProbe(): IoTotals {
  const totals: IoTotals = {
    postgresQueries: 0,
    postgresCommits: 0,
    postgresMs: 0,
    redisCommands: 0,
    redisMs: 0,
  };
  timed(pg.Client.prototype, 'query', (ms, args) => {
    totals.postgresQueries++;
    totals.postgresMs += ms;
    const text = typeof args[0] === 'string' ? args[0] : '';
    if (/^\s*commit\b/i.test(text)) totals.postgresCommits++;
  });
  timed(Redis.prototype, 'sendCommand', (ms) => {
    totals.redisCommands++;
    totals.redisMs += ms;
  });
  return totals;
}
