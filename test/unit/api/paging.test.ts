import { describe, expect, it } from 'vitest';
import { pageStream, type Page } from '../../../src/api/paging.js';

function page(current: number, next: number | null, totalCount: number, pageSize = 2): Page<number> {
  return {
    records: [current],
    rejections: [],
    pagination: { currentPage: current, nextPage: next, totalCount, totalPages: 3, pageSize },
  };
}

describe('pageStream', () => {
  it('follows next_page from the server, zero-indexed, until null', async () => {
    const asked: number[] = [];
    const stream = pageStream((n) => {
      asked.push(n);
      return Promise.resolve(page(n, n < 2 ? n + 1 : null, 10 + n));
    });
    const seen: number[] = [];
    for await (const p of stream) seen.push(...p.records);
    expect(asked).toEqual([0, 1, 2]);
    expect(seen).toEqual([0, 1, 2]);
    expect(stream.firstTotalCount).toBe(10);
    expect(stream.lastTotalCount).toBe(12);
    expect(stream.pagesFetched).toBe(3);
  });

  it('starts where told', async () => {
    const asked: number[] = [];
    for await (const _ of pageStream((n) => (asked.push(n), Promise.resolve(page(n, null, 1))), 4)) void _;
    expect(asked).toEqual([4]);
  });

  it('stops with an error when next_page does not move forward', async () => {
    const stream = pageStream((n) => Promise.resolve(page(n, n, 5)));
    await expect(async () => {
      for await (const _ of stream) void _;
    }).rejects.toThrow(/does not follow/);
  });
});
