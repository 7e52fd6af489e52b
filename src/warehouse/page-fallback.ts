import type { Rejection } from './rejected-records.js';

/**
 * Whether a failed write was refused because of the data itself, so that writing the same rows
 * again can never succeed: SQLSTATE class 22 (data exception: out of range, invalid text, bad
 * Unicode escape), 54001 (a value nested too deep for the server's stack), or a parameter the
 * driver could not serialise. Connection loss, deadlocks and bugs are not data errors: they fail
 * the page as before and are retried.
 */
export function isDataError(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string') return code.startsWith('22') || code === '54001';
  if (error instanceof RangeError) return true; // stack or string length exceeded while serialising
  return error instanceof TypeError && /serializ|bigint|circular/i.test(error.message);
}

function describeRefusal(error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const message = error instanceof Error ? error.message : String(error);
  return `the database refused this record${typeof code === 'string' ? ` (SQLSTATE ${code})` : ''}: ${message}`;
}

/**
 * Writes a page in one transaction (`writePage`, which also commits the checkpoint); when that
 * fails with a data error, writes the records one by one (`writeOne`, each its own transaction),
 * turns the ones the database refuses into rejections, and commits the checkpoint with no rows
 * and those rejections. The good records of a page are stored whatever one bad value does.
 * Records written one by one before the checkpoint commits are upserts: a crash re-fetches the
 * page and writes them again, idempotently.
 */
export async function writePageWithFallback<R>(options: {
  records: readonly R[];
  writePage(records: readonly R[], refused: readonly Rejection[]): Promise<void>;
  writeOne(record: R): Promise<void>;
  rejectionOf(record: R): Omit<Rejection, 'reason'>;
}): Promise<{ refused: Rejection[] }> {
  try {
    await options.writePage(options.records, []);
    return { refused: [] };
  } catch (error) {
    if (!isDataError(error)) throw error;
  }
  const refused: Rejection[] = [];
  for (const record of options.records) {
    try {
      await options.writeOne(record);
    } catch (error) {
      if (!isDataError(error)) throw error;
      refused.push({ ...options.rejectionOf(record), reason: describeRefusal(error) });
    }
  }
  await options.writePage([], refused);
  return { refused };
}
