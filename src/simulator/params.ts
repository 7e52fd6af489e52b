import { invalidParameter } from './responses.js';
import type { SimResponse } from './http-types.js';

/** Query-parameter parsing shared by the list routes. Returns the value or an error response. */

export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** ISO 8601 date or date-time; bare digits (epoch seconds) are rejected as the real API does. */
const ISO_PATTERN =
  /^\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}(?::?\d{2})?)?)?$/i;

export const DEFAULT_PAGE_SIZE = 50;
/** Decision (spec: not shown): larger asks are clamped, and the wrapper reports the size used. */
export const MAX_PAGE_SIZE = 500;

export type Parsed<T> = { ok: true; value: T } | { ok: false; response: SimResponse };

export function isUuid(text: string): boolean {
  return UUID_PATTERN.test(text);
}

export function parseUuidParam(query: URLSearchParams, name: string): Parsed<string | null> {
  const raw = query.get(name);
  if (raw === null || raw === '') return { ok: true, value: null };
  if (!isUuid(raw)) return { ok: false, response: invalidParameter(name, 'expected a UUID') };
  return { ok: true, value: raw.toLowerCase() };
}

export function parseIsoParam(query: URLSearchParams, name: string): Parsed<number | null> {
  const raw = query.get(name);
  if (raw === null || raw === '') return { ok: true, value: null };
  const hasZone = /(?:Z|[+-]\d{2}(?::?\d{2})?)$/i.test(raw) && raw.includes('T');
  const ms = ISO_PATTERN.test(raw) ? Date.parse(hasZone || !raw.includes('T') ? raw : `${raw}Z`) : NaN;
  if (Number.isNaN(ms))
    return { ok: false, response: invalidParameter(name, 'expected an ISO 8601 timestamp') };
  return { ok: true, value: ms };
}

export interface Paging {
  page: number;
  pageSize: number;
}

export function parsePaging(
  query: URLSearchParams,
  maxPageSize: number | null = MAX_PAGE_SIZE,
): Parsed<Paging> {
  const page = query.get('page');
  const size = query.get('page_size');
  const pageValue = page === null || page === '' ? 0 : Number(page);
  const sizeValue = size === null || size === '' ? DEFAULT_PAGE_SIZE : Number(size);
  if (!Number.isInteger(pageValue) || pageValue < 0)
    return { ok: false, response: invalidParameter('page', 'expected a non-negative integer') };
  if (!Number.isInteger(sizeValue) || sizeValue < 1)
    return { ok: false, response: invalidParameter('page_size', 'expected a positive integer') };
  return {
    ok: true,
    value: { page: pageValue, pageSize: maxPageSize === null ? sizeValue : Math.min(sizeValue, maxPageSize) },
  };
}

export function paginationWrapper(totalCount: number, paging: Paging): Record<string, number | null> {
  const totalPages = Math.ceil(totalCount / paging.pageSize);
  return {
    total_count: totalCount,
    total_pages: totalPages,
    current_page: paging.page,
    next_page: paging.page + 1 < totalPages ? paging.page + 1 : null,
    page_size: paging.pageSize,
  };
}

export function pageOf<T>(items: readonly T[], paging: Paging): T[] {
  return items.slice(paging.page * paging.pageSize, (paging.page + 1) * paging.pageSize);
}
