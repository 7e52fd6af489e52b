import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RedisClient } from '../redis/connection.js';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import { type Config } from '../config/config.js';
import { isLoopbackHost } from '../config/setting-checks.js';
import type { Logger } from '../log.js';
import type { PipelineMetrics } from '../metrics.js';
import { collectGaugeFigures, collectStatus, knownSecrets, scrubSecrets } from '../status/collect-status.js';
import { thresholdsFor } from '../status/verdict.js';
import type { DB } from '../warehouse/schema.js';
import { checkReadiness, type LivenessProbe } from './readiness.js';
import { refreshGauges } from './refresh-gauges.js';
import { singleFlightCache } from './single-flight-cache.js';
import { STATUS_AUTH_CHALLENGE, statusTokenMatches } from './status-auth.js';
import { renderStatusPage } from './status-page.js';

export interface HttpServerOptions {
  port: number;
  /** HTTP_HOST: 127.0.0.1 unless the operator opens it up (containers set 0.0.0.0). */
  host: string;
  db: Kysely<DB>;
  redis: RedisClient | undefined;
  config: Config;
  clock: Clock;
  metrics: PipelineMetrics;
  logger: Logger;
  /** In a worker: /readyz fails while a queue worker is stuck (idle with jobs ready). */
  liveness?: LivenessProbe;
}

export interface RunningHttpServer {
  /** The address actually bound (e.g. `127.0.0.1`, `::`), and its port. */
  host: string;
  port: number;
  /** `http://host:port/`, IPv6 in brackets: what the log line shows. */
  url: string;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

/** Many viewers of the page (or scrapers of /status.json) within this long cost one set of queries. */
export const STATUS_CACHE_MS = 5_000;

/** Liveness and readiness probes come from orchestrators that hold no token; they say little. */
const OPEN_PATHS = new Set(['/healthz', '/readyz']);

const UNAUTHORIZED: Reply = {
  status: 401,
  type: TEXT,
  body: 'unauthorized: STATUS_TOKEN is the password (any user name), or send Authorization: Bearer <STATUS_TOKEN>\n',
};

const json = (status: number, value: unknown): Reply => ({
  status,
  type: JSON_TYPE,
  body: `${JSON.stringify(value, null, 2)}\n`,
});

/** `/healthz`, `/readyz`, `/metrics`, `/status.json` and the status page `/`, on node:http. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  return (await bindHttpServer(options.host, options.port)).serve(options);
}

/** A port bound before the worker takes any job; it answers 503 until `serve` attaches the routes. */
export interface BoundHttpServer {
  host: string;
  port: number;
  url: string;
  serve(options: HttpServerOptions): RunningHttpServer;
  close(): Promise<void>;
}

/** Thrown when HTTP_HOST:HTTP_PORT cannot be bound (taken, or not an address of this host). */
export class HttpPortError extends Error {
  override readonly name = 'HttpPortError';
  constructor(
    readonly host: string,
    readonly port: number,
    readonly code: string | undefined,
    options: { cause: unknown },
  ) {
    super(
      code === 'EADDRINUSE'
        ? `HTTP_PORT ${port} on ${host} is taken (another worker on this host?): give each worker its own HTTP_PORT, or HTTP_PORT=0 for a free port shown in the log and in \`status\``
        : `cannot listen on HTTP_HOST ${host}, HTTP_PORT ${port}: ${(options.cause as Error).message}`,
      options,
    );
  }
}

/**
 * Binds HTTP_HOST:HTTP_PORT first, so a worker whose port is taken exits before it takes a job
 * instead of running without /healthz and /metrics (issue 40). Port 0 binds a free port.
 */
export async function bindHttpServer(host: string, port: number): Promise<BoundHttpServer> {
  let handle: ((request: IncomingMessage, response: ServerResponse) => void) | undefined;
  const server = createServer((request, response) => {
    if (handle !== undefined) return handle(request, response);
    response.writeHead(503, { 'content-type': TEXT }).end('starting\n');
  });
  try {
    await listen(server, port, host);
  } catch (error) {
    throw new HttpPortError(host, port, (error as { code?: string }).code, { cause: error });
  }
  const address = server.address() as AddressInfo;
  const url = `http://${address.address.includes(':') ? `[${address.address}]` : address.address}:${address.port}/`;
  const close = () =>
    new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      // Keep-alive sockets (a browser on the status page) would hold close() open otherwise.
      server.closeAllConnections();
    });
  return {
    host: address.address,
    port: address.port,
    url,
    close,
    serve(options) {
      const routes = statusRoutes(options);
      handle = (request, response) => {
        answer(request, response, routes, options).catch((error: unknown) => {
          options.logger.error({ err: error }, 'http handler crashed');
          response.destroy();
        });
      };
      return announce(options, { host: address.address, port: address.port, url, close });
    },
  };
}

function announce(options: HttpServerOptions, running: RunningHttpServer): RunningHttpServer {
  const { config, logger } = options;
  const { host, port, url } = running;
  logger.info(
    { host, port, url, statusToken: config.statusToken !== undefined },
    'serving /healthz, /readyz, /metrics and the status page',
  );
  if (config.statusToken === undefined && !isLoopbackHost(host)) {
    logger.warn(
      { host },
      'the status page and /metrics are reachable beyond this machine without a token: set STATUS_TOKEN',
    );
  }
  return running;
}

type Routes = Record<string, () => Promise<Reply>>;

function statusRoutes(options: HttpServerOptions): Routes {
  const { db, redis, config, clock, metrics, logger } = options;
  const sources = { db, redis, config, clock };
  const secrets = knownSecrets(config);
  const status = singleFlightCache(() => collectStatus(sources), { ttlMs: STATUS_CACHE_MS });
  const logReadinessFailure = (check: string, detail: unknown) =>
    logger.warn({ check, err: detail }, 'readiness check failed');
  return {
    '/healthz': () => Promise.resolve({ status: 200, type: TEXT, body: 'ok\n' }),
    '/readyz': async () => {
      const readiness = scrubSecrets(
        await checkReadiness(db, redis, logReadinessFailure, options.liveness),
        secrets,
      );
      return json(readiness.ready ? 200 : 503, readiness);
    },
    '/metrics': async () => {
      try {
        refreshGauges(metrics, await collectGaugeFigures(sources));
      } catch (error) {
        // Still serve the process counters: a scrape that fails outright hides them too.
        logger.warn({ err: error }, 'could not refresh status gauges for /metrics');
      }
      return { status: 200, type: metrics.registry.contentType, body: await metrics.registry.metrics() };
    },
    '/status.json': async () => json(200, await status.get()),
    '/': async () => ({
      status: 200,
      type: 'text/html; charset=utf-8',
      body: renderStatusPage(await status.get(), thresholdsFor(config)),
    }),
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  routes: Routes,
  options: HttpServerOptions,
): Promise<void> {
  const reply = await replyTo(request, routes, options);
  response.writeHead(reply.status, {
    'content-type': reply.type,
    'cache-control': 'no-store',
    ...(reply === UNAUTHORIZED ? { 'www-authenticate': STATUS_AUTH_CHALLENGE } : {}),
  });
  response.end(request.method === 'HEAD' ? undefined : reply.body);
}

/** Unknown path, wrong method, missing token, or the route's own reply (a crash answers 500). */
async function replyTo(request: IncomingMessage, routes: Routes, options: HttpServerOptions): Promise<Reply> {
  const { config, logger } = options;
  const path = new URL(request.url ?? '/', 'http://localhost').pathname;
  const route = routes[path === '/status' ? '/' : path];
  if (route === undefined) {
    return { status: 404, type: TEXT, body: 'not found: try /, /status.json, /metrics, /healthz, /readyz\n' };
  }
  if (request.method !== 'GET' && request.method !== 'HEAD')
    return { status: 405, type: TEXT, body: 'GET only\n' };
  const token = config.statusToken;
  if (
    token !== undefined &&
    !OPEN_PATHS.has(path) &&
    !statusTokenMatches(request.headers.authorization, token.reveal())
  ) {
    return UNAUTHORIZED;
  }
  try {
    return await route();
  } catch (error) {
    logger.error({ err: error, path }, 'status endpoint failed');
    return { status: 500, type: TEXT, body: 'internal error: see the worker log\n' };
  }
}

async function listen(server: Server, port: number, host: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}
