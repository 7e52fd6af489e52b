import { PagingOverrunError } from '../../api/errors.js';
import type { Page, PageStream } from '../../api/partner-api.js';
import { effectivePageSize, pageAllowance, type CheckIn } from '../../records/index.js';
import type { KeysetCursor } from '../../sync/keyset-paging.js';
import type { Window } from '../../sync/windows.js';
import type { CheckinsDeps } from './deps.js';

/** A page request in flight, and when it started (the stale-write guards order reads by it). */
export interface PendingPage {
  seenAt: Date;
  result: Promise<Page<CheckIn>>;
}

/**
 * The page requests of one read of a window: each at a keyset cursor, counted against the
 * allowance the API's own `total_count` implies, so a feed that never ends cannot page forever.
 */
export class WindowPageReader {
  requests = 0;
  #allowed = 0;

  constructor(
    private readonly deps: Pick<CheckinsDeps, 'api' | 'clock' | 'config' | 'signal'>,
    private readonly window: Window,
  ) {}

  /** Requests the page at `cursor`: page `cursor.page` of the rows created before `cursor.before`. */
  fetch(cursor: KeysetCursor): PendingPage {
    const { api, clock, config, signal } = this.deps;
    this.requests++;
    const seenAt = clock.now();
    const result = firstPageOf(
      api.checkInPages({
        createdAfter: new Date(this.window.start),
        createdBefore: new Date(cursor.before),
        startPage: cursor.page,
        pageSize: config.api.pageSize,
        signal,
      }),
    );
    // Settled by whoever awaits it; a prefetch abandoned by a failed write must not go unhandled.
    result.catch(() => undefined);
    return { seenAt, result };
  }

  /** The page size the server served; throws PagingOverrunError once the requests pass the allowance. */
  servedPageSize(page: Page<CheckIn>): number {
    const served = effectivePageSize(page.pagination, this.deps.config.api.pageSize);
    // Keyset paging re-reads the rows tied at a page's oldest instant, so allow twice the pages.
    this.#allowed = Math.max(this.#allowed, 2 * pageAllowance(page.pagination, served));
    if (this.requests > this.#allowed) throw new PagingOverrunError(this.requests, this.#allowed);
    return served;
  }
}

async function firstPageOf<T>(stream: PageStream<T>): Promise<Page<T>> {
  for await (const page of stream) return page;
  throw new Error('the page stream yielded no page');
}
