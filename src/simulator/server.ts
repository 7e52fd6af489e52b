import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { setTimeout as sleep } from 'node:timers/promises';
import type { SimContext } from './context.js';
import type { FaultSettings } from './faults.js';
import type { CredentialKind, Route, SimRequest, SimResponse } from './http-types.js';
import type { RequestLog } from './request-log.js';
import { envelopeC, gatewayErrorPage, jsonResponse } from './responses.js';

const MAX_BODY_BYTES = 1_000_000;
const VERSION_PREFIX = '/v1';

export type AdminHandler = (
  method: string,
  path: string,
  authorization: string | undefined,
  body: string,
) => SimResponse;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RangeError('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function credentialOf(request: IncomingMessage): { kind: CredentialKind; key: string } {
  const apiKey = request.headers['x-api-key'];
  if (typeof apiKey === 'string' && apiKey !== '') return { kind: 'api_key', key: `k:${apiKey}` };
  const authorization = request.headers['authorization'];
  if (typeof authorization === 'string' && authorization !== '') {
    return { kind: /^bearer /i.test(authorization) ? 'bearer' : 'client_secret', key: `a:${authorization}` };
  }
  return { kind: 'none', key: `ip:${request.socket.remoteAddress ?? ''}` };
}

function write(response: ServerResponse, answer: SimResponse): void {
  const body = Buffer.from(answer.body, 'utf8');
  response.writeHead(answer.status, { ...answer.headers, 'content-length': String(body.length) });
  response.end(body);
}

const PADDING = Buffer.alloc(64 * 1024, 0x20);

/**
 * The oversize fault: the answer followed by `padBytes` of whitespace (still valid JSON), chunked
 * with no Content-Length so only counting can stop it. Stops when the client hangs up.
 */
async function writePadded(response: ServerResponse, answer: SimResponse, padBytes: number): Promise<void> {
  response.writeHead(answer.status, answer.headers);
  response.write(answer.body);
  const closed = once(response, 'close').then(() => false);
  for (let sent = 0; sent < padBytes && !response.destroyed; sent += PADDING.length) {
    if (!response.write(PADDING) && !(await Promise.race([once(response, 'drain').then(() => true), closed])))
      return;
  }
  response.end();
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

/** Routing, faults and the request log around the route handlers. */
export function createSimulatorServer(
  ctx: SimContext,
  routes: Route[],
  log: RequestLog,
  admin: AdminHandler,
): Server {
  const dispatch = async (request: SimRequest): Promise<SimResponse> => {
    for (const route of routes) {
      const match = route.pattern.exec(request.path);
      if (match && route.method === request.method) return route.handler(request, match.slice(1));
    }
    // Unknown paths, removed routes (/users/{id}/*) and wrong methods get the routing 404.
    return envelopeC(ctx.clock.nowMs(), `${VERSION_PREFIX}${request.path}`);
  };

  const handle = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const url = new URL(incoming.url ?? '/', 'http://simulator.local');
    const method = incoming.method ?? 'GET';
    const body = await readBody(incoming);
    if (url.pathname.startsWith('/_admin/')) {
      write(
        outgoing,
        admin(method, url.pathname.slice('/_admin'.length), incoming.headers.authorization, body),
      );
      return;
    }
    const credential = credentialOf(incoming);
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
        headers: incoming.headers,
        body,
      });
      answer = withPagingFaults(answer, faults, requestedPage);
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
    if (padBytes > 0) await writePadded(outgoing, answer, padBytes);
    else write(outgoing, answer);
  };

  return createServer((incoming, outgoing) => {
    handle(incoming, outgoing).catch((error: unknown) => {
      const message = error instanceof RangeError ? error.message : 'internal simulator error';
      if (!outgoing.headersSent) write(outgoing, jsonResponse(500, { error: message }));
      else outgoing.destroy();
    });
  });
}
