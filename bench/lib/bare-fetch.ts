import http from 'node:http';
import pMap from 'p-map';
import { Agent, request } from 'undici';
import { advanceKeyset } from '../../src/sync/keyset-paging.js';
import type { Window } from '../../src/sync/windows.js';

// The floor the pipeline is compared with: the same requests over the same windows, keyset
// paging exactly as pageToEnd does (advanceKeyset: bound moved to the oldest row + 1 ms, page 0 again), but
// nothing beyond HTTP and JSON.parse: no record validation, no rate limiter, no database.

export interface BareFetchOptions {
  baseUrl: string;
  apiKey: string;
  userAgent: string;
  pageSize: number;
  windows: readonly Window[];
  /** Windows fetched at once (default 2, as runCheckinsPass pages them). */
  concurrency?: number;
  /**
   * The HTTP client: the undici package (the pipeline's transport) or node:http with a keep-alive
   * agent, to measure what undici buys (issue 39). Default undici.
   */
  client?: 'undici' | 'node:http';
}

/** GET `url` with node:http on a keep-alive agent: status and body text. */
function nodeHttpGet(
  url: URL,
  headers: Record<string, string>,
  agent: http.Agent,
): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { headers, agent }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    });
    req.on('error', reject);
  });
}

export interface BareFetchResult {
  requests: number;
  rows: number;
  elapsedMs: number;
}

interface FeedPage {
  check_ins: Array<{ created_at: string }>;
  pagination: { next_page: number | null };
}

export async function bareFetchWindows(options: BareFetchOptions): Promise<BareFetchResult> {
  // A keep-alive agent like the pipeline's transport, so both pay the same connection costs.
  const agent = new Agent({ keepAliveTimeout: 10_000, connections: 16 });
  const nodeAgent = new http.Agent({ keepAlive: true, maxSockets: 16 });
  const get = async (url: URL) => {
    if (options.client === 'node:http') return nodeHttpGet(url, headers, nodeAgent);
    const response = await request(url, { headers, dispatcher: agent });
    return { status: response.statusCode, text: await response.body.text() };
  };
  const headers = {
    'x-api-key': options.apiKey,
    'user-agent': options.userAgent,
    accept: 'application/json',
  };
  let requests = 0;
  let rows = 0;
  const started = performance.now();
  try {
    // As many windows in flight as the pipeline pages at once: same pages, same concurrency.
    await pMap(
      options.windows,
      async (window) => {
        let before = window.end;
        let page = 0;
        for (;;) {
          const url = new URL(`${options.baseUrl}/check_ins`);
          url.searchParams.set('created_after', new Date(window.start).toISOString());
          url.searchParams.set('created_before', new Date(before).toISOString());
          url.searchParams.set('page', String(page));
          url.searchParams.set('page_size', String(options.pageSize));
          const { status, text } = await get(url);
          if (status !== 200) throw new Error(`GET ${url.pathname} answered ${status}`);
          const body = JSON.parse(text) as FeedPage;
          requests++;
          const records = body.check_ins;
          rows += records.length;
          if (body.pagination.next_page === null || records.length === 0) break;
          ({ before, page } = advanceKeyset(
            { before, page },
            records.map((record) => Date.parse(record.created_at)),
            false,
          ));
        }
      },
      { concurrency: options.concurrency ?? 2 },
    );
    return { requests, rows, elapsedMs: performance.now() - started };
  } finally {
    await agent.close();
    nodeAgent.destroy();
  }
}
