import { SentinelConnector } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { FailoverSafeSentinelConnector } from '../../../src/redis/failover-safe-sentinel-connector.js';
import { freePort } from '../../helpers/free-port.js';

// The race of issue 38, made certain: a client searching for its primary (every Sentinel refuses,
// so it sleeps and retries) when the previous connection's failover detector hears +switch-master
// and disconnects the connector. No Redis needed: the Sentinel address refuses connections.

/** ioredis's FailoverDetector as far as the connector sees it: cleanup(), and a message that disconnects. */
function staleDetector(connector: SentinelConnector) {
  const detector = {
    isDisconnected: false,
    cleanup() {
      detector.isDisconnected = true;
    },
    /** What FailoverDetector does on a +switch-master message. */
    hearSwitchMaster() {
      if (detector.isDisconnected) return;
      detector.isDisconnected = true;
      connector.disconnect();
    },
  };
  (connector as unknown as { failoverDetector: unknown }).failoverDetector = detector;
  return detector;
}

async function searchInterruptedByPromotion(Connector: typeof SentinelConnector) {
  const port = await freePort();
  const connector = new Connector({
    sentinels: [{ host: '127.0.0.1', port }],
    name: 'rewards-primary',
    sentinelRetryStrategy: () => 20,
    connectTimeout: 500,
  });
  const detector = staleDetector(connector);
  const errors: string[] = [];
  let heard = false;
  const search = connector.connect((_type, error) => {
    errors.push(error.message);
    if (!heard) {
      heard = true;
      detector.hearSwitchMaster();
    }
  });
  const outcome = await Promise.race([
    search.then(
      () => 'connected',
      (error: Error) => `ended: ${error.message}`,
    ),
    new Promise<string>((resolve) => setTimeout(() => resolve('still searching'), 500)),
  ]);
  const unreachable = errors.filter((message) => message.startsWith('All sentinels are unreachable')).length;
  connector.disconnect();
  const afterOwnDisconnect = await search.then(
    () => 'connected',
    (error: Error) => `ended: ${error.message}`,
  );
  return { outcome, unreachable, afterOwnDisconnect };
}

describe('a Sentinel search interrupted by a promotion', () => {
  it("ends the client for good with ioredis's own connector (the cause)", async () => {
    const result = await searchInterruptedByPromotion(SentinelConnector);
    expect(result.outcome).toBe('ended: Connection is closed.');
  });

  it('keeps searching with FailoverSafeSentinelConnector, and still ends on its own disconnect()', async () => {
    const result = await searchInterruptedByPromotion(FailoverSafeSentinelConnector);
    expect(result.outcome).toBe('still searching');
    expect(result.unreachable).toBeGreaterThan(2);
    expect(result.afterOwnDisconnect).toBe('ended: Connection is closed.');
  });
});
