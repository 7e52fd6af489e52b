import { SentinelConnector, type SentinelConnectionOptions } from 'ioredis';

// ioredis's SentinelConnector with the one change a failover under load needs.
//
// The cause (ioredis 5.x, node_modules/ioredis/built/connectors/SentinelConnector): with
// `failoverDetector` on, each connection subscribes to the Sentinels' +switch-master, and that
// detector is replaced only once the *next* connection is up. When the primary dies with commands
// in flight, the client is already searching for a primary (asking the Sentinels, who still name
// the dead one for a second or two, or sleeping after "All sentinels are unreachable. Retrying from
// scratch after 200ms") when the promotion is announced. The stale detector then calls
// `connector.disconnect()` in the middle of that search; the search ends with "Connection is
// closed.", ioredis's Redis takes a failed search as final (status `end`, no retry) and every
// command queued on it (BullMQ's blocking BZPOPMIN, the rate limiter's scripts) waits for ever.
// Timing decides, which is why an idle client survives a failover and a busy one often does not.
//
// The fix: a new search first retires the previous connection's detector (that connection is gone;
// the detector only exists to close a connection that outlived a promotion), so only the client's
// own disconnect()/quit() can end a search. Should a search still end without such a request, it
// starts again rather than ending the client; supervised-client.ts catches any `end` left over.

/** The subset of ioredis's private FailoverDetector used here. */
interface FailoverDetectorLike {
  cleanup(): void;
}

type ErrorEmitter = Parameters<SentinelConnector['connect']>[0];
type Stream = Awaited<ReturnType<SentinelConnector['connect']>>;

export class FailoverSafeSentinelConnector extends SentinelConnector {
  /** The client's own disconnect() (or quit) since this search began. */
  private closeAsked = false;

  /** ioredis builds it with the client's options (its ConnectorConstructor takes `unknown`). */
  constructor(options: unknown) {
    super(options as SentinelConnectionOptions);
  }

  override connect(eventEmitter: ErrorEmitter): Promise<Stream> {
    this.closeAsked = false;
    this.retireFailoverDetector();
    return this.search(eventEmitter);
  }

  override disconnect(): void {
    this.closeAsked = true;
    super.disconnect();
  }

  private async search(eventEmitter: ErrorEmitter): Promise<Stream> {
    for (;;) {
      try {
        return await super.connect(eventEmitter);
      } catch (error) {
        // Asked to close, or a retry strategy that gives up (one-shot clients): the error stands.
        if (this.closeAsked || !isConnectionClosed(error)) throw error;
        eventEmitter('error', new Error('sentinel search interrupted; searching again', { cause: error }));
      }
    }
  }

  /**
   * Drops the previous connection's detector before a search. The field is private in ioredis's
   * types; `cleanup()` (unsubscribe, stop reacting to +switch-master) is its documented purpose.
   */
  private retireFailoverDetector(): void {
    const self = this as unknown as { failoverDetector: FailoverDetectorLike | null };
    self.failoverDetector?.cleanup();
    self.failoverDetector = null;
  }
}

function isConnectionClosed(error: unknown): boolean {
  return error instanceof Error && error.message === 'Connection is closed.';
}
