import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger, logStyle } from '../../../src/log.js';
import { logWindowPaged } from '../../../src/worker/job-log.js';

function capture() {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(
        ...chunk
          .toString('utf8')
          .split('\n')
          .filter((line) => line !== ''),
      );
      done();
    },
  });
  return { destination, lines };
}

const occurrences = (line: string, key: string) => line.split(`"${key}":`).length - 1;

describe('log lines an operator reads', () => {
  it('no duplicate keys: a child that rebinds a key replaces it (the inner value wins)', () => {
    const { destination, lines } = capture();
    const logger = createLogger({
      level: 'info',
      destination,
    });
    const tick = logger.child({ stream: 'payment_intents' }).child({ job: 'payment-intents-tick' });
    tick.child({ stream: 'alerts' }).child({ memberId: 'm1' }).info('delivered');
    tick.info('tick done');
    expect(lines).toHaveLength(2);
    const [delivered, done] = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(occurrences(lines[0] ?? '', 'stream')).toBe(1);
    expect(delivered).toMatchObject({ stream: 'alerts', job: 'payment-intents-tick', memberId: 'm1' });
    expect(done).toMatchObject({ stream: 'payment_intents', job: 'payment-intents-tick' });
  });

  it('errors carry no stack below LOG_LEVEL=debug', () => {
    for (const [level, stack] of [
      ['info', false],
      ['debug', true],
    ] as const) {
      const { destination, lines } = capture();
      const logger = createLogger({ level, destination });
      logger.warn({ err: new Error('connect ECONNREFUSED 127.0.0.1:6380') }, 'redis connection error');
      const err = (JSON.parse(lines[0] ?? '{}') as { err: Record<string, unknown> }).err;
      expect(err.message).toBe('connect ECONNREFUSED 127.0.0.1:6380');
      expect('stack' in err).toBe(stack);
    }
  });

  it.each([
    [true, {}, { pretty: true, color: true }],
    [true, { NO_COLOR: '1' }, { pretty: true, color: false }],
    [true, { NO_COLOR: '' }, { pretty: true, color: true }],
    [false, {}, { pretty: false, color: false }],
  ])('colours off with NO_COLOR or no terminal (stderr a terminal: %s, env %j)', (terminal, env, style) => {
    expect(logStyle(terminal, env)).toEqual(style);
  });

  it('each check-in window paged is one info line with rows, requests and duration; a skipped one is debug', () => {
    const { destination, lines } = capture();
    const logger = createLogger({
      level: 'info',
      destination,
    });
    logWindowPaged(
      logger,
      { status: 'complete', window: '2026-11-25T10:00Z/1h', rows: 42, requests: 1 },
      812,
    );
    logWindowPaged(logger, { status: 'skipped', window: '2026-11-25T11:00Z/1h', requests: 0 }, 3);
    logWindowPaged(logger, { status: 'succeeded', rows: 0 }, 3); // a pass job: not a window
    expect(lines.map((line) => JSON.parse(line) as unknown)).toEqual([
      expect.objectContaining({
        level: 30,
        msg: 'window paged',
        window: '2026-11-25T10:00Z/1h',
        status: 'complete',
        rows: 42,
        requests: 1,
        durationMs: 812,
      }),
    ]);
  });
});
