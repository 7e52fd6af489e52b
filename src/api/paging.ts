import type { Pagination, Rejection } from '../records/index.js';
import type { DriftCount } from '../records/schema-drift.js';
import { PagingOverrunError, UnexpectedResponseShapeError } from './errors.js';
import { pageAllowance } from '../records/pagination.js';

// Paging trusts the server's `pagination` wrapper, not what we asked for: the server may cap
// `page_size`, and `next_page` (null on the last page) is what says whether there is more.

export interface Page<T> {
  records: T[];
  rejections: Rejection[];
  pagination: Pagination;
  /** Schema drift the page's records showed, per (field, change); absent when none. */
  drift?: DriftCount[];
}

/** An async iterable of pages that remembers the `total_count` of the first and last page fetched. */
export interface PageStream<T> extends AsyncIterable<Page<T>> {
  /** `total_count` of the first page fetched (undefined before it is). */
  readonly firstTotalCount: number | undefined;
  /** `total_count` of the latest page fetched; differs from the first when rows arrived meanwhile. */
  readonly lastTotalCount: number | undefined;
  readonly pagesFetched: number;
}

export type FetchPage<T> = (page: number) => Promise<Page<T>>;

export function pageStream<T>(fetchPage: FetchPage<T>, startPage = 0): PageStream<T> {
  let firstTotalCount: number | undefined;
  let lastTotalCount: number | undefined;
  let pagesFetched = 0;
  return {
    get firstTotalCount() {
      return firstTotalCount;
    },
    get lastTotalCount() {
      return lastTotalCount;
    },
    get pagesFetched() {
      return pagesFetched;
    },
    async *[Symbol.asyncIterator]() {
      let page: number | null = startPage;
      let allowed = 0;
      while (page !== null) {
        const result: Page<T> = await fetchPage(page);
        pagesFetched++;
        firstTotalCount ??= result.pagination.totalCount;
        lastTotalCount = result.pagination.totalCount;
        // The most pages any answer's totals allowed (totals may grow while we page).
        allowed = Math.max(allowed, pageAllowance(result.pagination, result.pagination.pageSize));
        if (page - startPage + 1 > allowed) throw new PagingOverrunError(page - startPage + 1, allowed);
        const next = result.pagination.nextPage;
        // A next_page that does not move forward would page forever.
        if (next !== null && next <= page) {
          throw new UnexpectedResponseShapeError(
            `pagination.next_page ${next} does not follow page ${page}`,
            {},
          );
        }
        yield result;
        // An empty page ends the list whatever next_page says: pages after it are past the data.
        page = result.records.length + result.rejections.length === 0 ? null : next;
      }
    },
  };
}
