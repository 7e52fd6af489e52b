import { z } from 'zod';
import { formatIssues, parseRecords, type ParsedRecords, type RecordParser } from './parse.js';
import { countSchema } from './primitives.js';

/** The `pagination` wrapper on paginated lists. Pages are zero-indexed. */
export interface Pagination {
  totalCount: number;
  totalPages: number;
  currentPage: number;
  /** null on the last page. */
  nextPage: number | null;
  /** As answered; 0 when the server sent 0 or left it out (then the size asked for applies). */
  pageSize: number;
}

/** How many records a page holds: the server's page_size, or the size asked for when it gave none. */
export function effectivePageSize(pagination: Pagination, requested: number): number {
  return pagination.pageSize > 0 ? pagination.pageSize : requested;
}

/** Pages that `total_count` and `total_pages` allow, plus slack for rows arriving while we page. */
export function pageAllowance(pagination: Pagination, pageSize: number, slack = 3): number {
  const byCount = pageSize > 0 ? Math.ceil(pagination.totalCount / pageSize) : 0;
  return Math.max(pagination.totalPages, byCount) + slack;
}

export const paginationSchema = z
  .object({
    total_count: countSchema,
    total_pages: countSchema,
    current_page: countSchema,
    next_page: countSchema.nullable(),
    // Absent or 0 is not trusted for sizing (it would split windows down to nothing).
    page_size: countSchema.optional(),
  })
  .transform((w): Pagination => ({
    totalCount: w.total_count,
    totalPages: w.total_pages,
    currentPage: w.current_page,
    nextPage: w.next_page,
    pageSize: w.page_size ?? 0,
  }));

/**
 * A list response whose envelope was readable. Bad items are in `rejections`; the envelope itself
 * failing (not an object, list missing, bad pagination) is the `ok: false` case, which means the
 * response as a whole is unusable.
 */
export type ListResult<T> = ({ ok: true } & ParsedRecords<T>) | { ok: false; reason: string };
export type PageResult<T> =
  ({ ok: true; pagination: Pagination } & ParsedRecords<T>) | { ok: false; reason: string };

function readItems(
  raw: unknown,
  listKey: string,
): { ok: true; items: unknown[] } | { ok: false; reason: string } {
  const envelope = z.object({ [listKey]: z.array(z.unknown()) }).safeParse(raw);
  if (!envelope.success) return { ok: false, reason: formatIssues(envelope.error.issues, raw) };
  return { ok: true, items: envelope.data[listKey] ?? [] };
}

function safeEnvelope<T>(run: () => T, fallback: (reason: string) => T): T {
  try {
    return run();
  } catch (error) {
    return fallback(
      `(envelope): normalizer failed: ${error instanceof Error ? error.message : 'unknown error'}`,
    );
  }
}

/** `{ <listKey>: [...] }` (not paginated: wallets, tags). Never throws. */
export function parseList<T>(raw: unknown, listKey: string, parseOne: RecordParser<T>): ListResult<T> {
  return safeEnvelope<ListResult<T>>(
    () => {
      const list = readItems(raw, listKey);
      if (!list.ok) return list;
      return { ok: true, ...parseRecords(list.items, parseOne) };
    },
    (reason) => ({ ok: false, reason }),
  );
}

/** `{ <listKey>: [...], pagination }`. Never throws. */
export function parsePage<T>(raw: unknown, listKey: string, parseOne: RecordParser<T>): PageResult<T> {
  return safeEnvelope<PageResult<T>>(
    () => {
      const list = readItems(raw, listKey);
      if (!list.ok) return list;
      const page = z.object({ pagination: paginationSchema }).safeParse(raw);
      if (!page.success) return { ok: false, reason: formatIssues(page.error.issues, raw) };
      return { ok: true, pagination: page.data.pagination, ...parseRecords(list.items, parseOne) };
    },
    (reason) => ({ ok: false, reason }),
  );
}
