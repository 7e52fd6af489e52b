import { setTimeout as sleep } from 'node:timers/promises';
import type { SimContext } from './context.js';
import type { FaultSettings } from './faults.js';
import type { Route, SimRequest, SimResponse } from './http-types.js';
import type { RequestLog } from './request-log.js';
import { envelopeC, gatewayErrorPage, jsonResponse } from './responses.js';
import { applySchemaChanges } from './schema-faults.js';

const VERSION_PREFIX = '/v1';

export type AdminHandler = (
  method: string,
  path: string,
  authorization: string | undefined,
  body: string,
  query: URLSearchParams,
) => SimResponse;

/** One request as the simulator sees it, whether it came over a socket or from a function call. */
export interface IncomingSimRequest {
  method?: string;
  /** Path and query (`/v1/restaurants?page=1`, `/_admin/world`), or a whole URL whose origin is ignored. */
  url: string | URL;
  /** Header names in any case. */
  headers?: Record<string, string | string[] | undefined>;
  body?: string;
  /** The client address the rate-limit fault keys on when no credential is sent. */
  remoteAddress?: string;
}

export interface HandledResponse extends SimResponse {
  /** Whitespace the oversize fault appends after the body (streamed by the HTTP server). */
  padBytes: number;
}

function lowerCaseHeaders(headers: IncomingSimRequest['headers'] = {}): SimRequest['headers'] {
  const out: SimRequest['headers'] = {};
  for (const [name, value] of Object.entries(headers))
    if (value !== undefined) out[name.toLowerCase()] = value;
  return out;
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

function credentialOf(headers: SimRequest['headers'], remoteAddress: string) {
  const apiKey = first(headers['x-api-key']);
  if (typeof apiKey === 'string' && apiKey !== '') return { kind: 'api_key' as const, key: `k:${apiKey}` };
  const authorization = first(headers['authorization']);
  if (typeof authorization === 'string' && authorization !== '') {
    return {
      kind: /^bearer /i.test(authorization) ? ('bearer' as const) : ('client_secret' as const),
      key: `a:${authorization}`,
    };
  }
  return { kind: 'none' as const, key: `ip:${remoteAddress}` };
}

/** A paginated 200 answer rewritten by the endlessPaging and pageSizeAnswer faults. */
function withPagingFaults(answer: SimResponse, faults: FaultSettings, requestedPage: number): SimResponse {
  if (faults.endlessPaging === null && faults.pageSizeAnswer === null) return answer;
  if (answer.status !== 200 || !answer.body.includes('"pagination"')) return answer;
  const body = JSON.parse(answer.body) as { pagination?: Record<string, unknown> };
  const pagination = body.pagination;
  if (pagination === undefined) return answer;
  if (faults.endlessPaging !== null) {
    pagination['current_page'] = requestedPage;
    pagination['next_page'] = requestedPage + 1;
  }
  if (faults.pageSizeAnswer === 'zero') pagination['page_size'] = 0;
  if (faults.pageSizeAnswer === 'absent') delete pagination['page_size'];
  return { ...answer, body: JSON.stringify(body) };
}

/**
 * Routing, faults, the request log and the lazy application of due changes around the route handlers,
 * independent of any socket: the HTTP server and in-process callers both go through here.
 */
export function createRequestHandler(
  ctx: SimContext,
  routes: Route[],
  log: RequestLog,
  admin: AdminHandler,
): (request: IncomingSimRequest) => Promise<HandledResponse> {
  const dispatch = async (request: SimRequest): Promise<SimResponse> => {
    for (const route of routes) {
      const match = route.pattern.exec(request.path);
      if (match && route.method === request.method) return route.handler(request, match.slice(1));
    }
    // Unknown paths, removed routes (/users/{id}/*) and wrong methods get the routing 404.
    return envelopeC(ctx.clock.nowMs(), `${VERSION_PREFIX}${request.path}`);
  };

  return async (incoming) => {
    // Every change due by now is applied before the answer is computed.
    ctx.world.timeline.runUntil(ctx.clock.nowMs());
    const url = new URL(incoming.url, 'http://simulator.local');
    const method = (incoming.method ?? 'GET').toUpperCase();
    const body = incoming.body ?? '';
    const headers = lowerCaseHeaders(incoming.headers);
    if (url.pathname.startsWith('/_admin/')) {
      const path = url.pathname.slice('/_admin'.length);
      return { ...admin(method, path, first(headers['authorization']), body, url.searchParams), padBytes: 0 };
    }
    const credential = credentialOf(headers, incoming.remoteAddress ?? 'in-process');
    let answer: SimResponse;
    const latency = ctx.faults.latencyMs();
    if (latency > 0) await sleep(latency);
    const retryAfter = ctx.faults.rateLimit(credential.key);
    const serverError = retryAfter === null ? ctx.faults.serverError() : null;
    if (retryAfter !== null) {
      // Decision (spec: body not shown): envelope A with rate_limit_error, plus Retry-After in whole seconds.
      answer = jsonResponse(
        429,
        {
          error: {
            type: 'rate_limit_error',
            code: 'rate_limited',
            message: 'Too many requests.',
            param: null,
          },
        },
        { 'retry-after': String(retryAfter) },
      );
    } else if (serverError !== null) {
      answer = gatewayErrorPage(serverError);
    } else if (url.pathname === VERSION_PREFIX || url.pathname.startsWith(`${VERSION_PREFIX}/`)) {
      const faults = ctx.faults.get();
      const requestedPage = Number(url.searchParams.get('page') ?? '0');
      const query = new URLSearchParams(url.searchParams);
      if (faults.endlessPaging === 'same-page' && query.has('page')) query.set('page', '0');
      answer = await dispatch({
        method,
        path: url.pathname.slice(VERSION_PREFIX.length),
        query,
        headers,
        body,
      });
      answer = withPagingFaults(answer, faults, requestedPage);
      if (method === 'GET' && answer.status === 200 && faults.schemaChanges.length > 0) {
        const path = url.pathname.slice(VERSION_PREFIX.length);
        answer = { ...answer, body: applySchemaChanges(path, answer.body, faults.schemaChanges) };
      }
    } else {
      answer = envelopeC(ctx.clock.nowMs(), url.pathname);
    }
    if (
      answer.status === 200 &&
      answer.headers['content-type']?.startsWith('application/json') &&
      ctx.faults.takeTruncation()
    ) {
      answer = { ...answer, body: answer.body.slice(0, Math.floor(answer.body.length / 2)) };
    }
    log.add({
      method,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      status: answer.status,
      credential: answer.credential ?? credential.kind,
      at: ctx.clock.now().toISOString(),
    });
    const padBytes =
      answer.status === 200 && url.pathname.startsWith(VERSION_PREFIX) ? ctx.faults.takeOversize() : 0;
    return { ...answer, padBytes };
  };
}
