import { EventEmitter } from 'node:events';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../../src/log.js';
import { decideAfterEnd, superviseClient } from '../../../src/redis/supervised-client.js';

const MINUTE = 60_000;
const policy = { maxRebuilds: 3, periodMs: 10 * MINUTE };

describe('decideAfterEnd', () => {
  it.each([
    { previous: [], now: 0, action: 'rebuild', kept: 1 },
    { previous: [0, 1_000], now: 2_000, action: 'rebuild', kept: 3 },
    { previous: [0, 1_000, 2_000], now: 3_000, action: 'give-up', kept: 3 },
    // Rebuilds older than the period no longer count.
    { previous: [0, 1_000, 2_000], now: 10 * MINUTE + 1_500, action: 'rebuild', kept: 2 },
  ])('after $previous.length rebuilds, at $now: $action', ({ previous, now, action, kept }) => {
    const decision = decideAfterEnd(previous, now, policy);
    expect(decision.action).toBe(action);
    expect(decision.rebuilds).toHaveLength(kept);
  });
});

/** What superviseClient touches of an ioredis client: status, events, connect/disconnect/quit/duplicate. */
class FakeClient extends EventEmitter {
  status = 'ready';
  connects = 0;
  copies: FakeClient[] = [];
  connect(): Promise<void> {
    this.connects++;
    this.status = 'connecting';
    return Promise.resolve();
  }
  disconnect(_reconnect?: boolean): void {
    this.status = 'end';
  }
  quit(): Promise<string> {
    this.status = 'end';
    return Promise.resolve('OK');
  }
  duplicate(_options?: object): FakeClient {
    const copy = new FakeClient();
    this.copies.push(copy);
    return copy;
  }
  /** ioredis ending the client on its own (a failed Sentinel search, a retry strategy giving up). */
  endByItself(): void {
    this.status = 'end';
    this.emit('end');
  }
}

function supervised(name = 'worker queues') {
  const lines: Array<{ level: number; msg: string; connection?: string }> = [];
  const logger = createLogger({
    level: 'debug',
    pretty: false,
    destination: { write: (line: string) => void lines.push(JSON.parse(line)) },
  });
  const lost: string[] = [];
  const fake = new FakeClient();
  const client = superviseClient(fake as unknown as Redis, {
    name,
    logger,
    policy,
    onLost: (connection) => lost.push(connection),
  }) as unknown as FakeClient;
  return { client, lines, lost };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('superviseClient', () => {
  it('an end nobody asked for reconnects the same client, with one line naming the connection', async () => {
    const { client, lines, lost } = supervised();
    client.endByItself();
    await settle();
    expect(client.connects).toBe(1);
    expect(lines.filter((line) => line.level >= 40).map((line) => line.msg)).toEqual([
      'redis connection "worker queues" ended; rebuilding',
    ]);
    expect(lost).toEqual([]);
  });

  it('a disconnect() or quit() of its own is a requested close: no rebuild, no line', async () => {
    for (const close of ['disconnect', 'quit'] as const) {
      const { client, lines } = supervised();
      void client[close]();
      client.emit('end');
      await settle();
      expect(client.connects).toBe(0);
      expect(lines).toEqual([]);
    }
  });

  it('disconnect(true) is a reconnect, not a close; a later connect() reopens a closed client', async () => {
    const { client } = supervised();
    client.disconnect(true);
    client.endByItself();
    await settle();
    expect(client.connects).toBe(1);
    client.disconnect();
    void client.connect();
    client.endByItself();
    await settle();
    expect(client.connects).toBe(3);
  });

  it('a client that keeps ending is lost: one error line naming it, and onLost (exit 1) once', async () => {
    const { client, lines, lost } = supervised('shared limiter');
    for (let i = 0; i < 5; i++) {
      client.endByItself();
      await settle();
    }
    expect(client.connects).toBe(3);
    expect(lost).toEqual(['shared limiter']);
    const errors = lines.filter((line) => line.level >= 50);
    expect(errors).toHaveLength(1);
    expect(errors[0]!.msg).toMatch(
      /^redis connection "shared limiter" ended again and cannot be rebuilt; exiting with status 1/,
    );
  });

  it("BullMQ's copies (duplicate()) are supervised too, the blocking one named as such", async () => {
    const { client, lines } = supervised();
    const blocking = client.duplicate({ connectionName: 'bull:d2luZG93:w:worker-1' });
    const copy = client.duplicate();
    blocking.endByItself();
    copy.endByItself();
    await settle();
    expect(blocking.connects).toBe(1);
    expect(copy.connects).toBe(1);
    expect(lines.map((line) => line.msg)).toEqual([
      'redis connection "worker queues/blocking" ended; rebuilding',
      'redis connection "worker queues/copy 1" ended; rebuilding',
    ]);
  });
});
