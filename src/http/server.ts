import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Redis } from 'ioredis';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import type { Logger } from '../log.js';
import type { PipelineMetrics } from '../metrics.js';
import { collectGaugeFigures, collectStatus, knownSecrets, scrubSecrets } from '../status/collect-status.js';
import { thresholdsFor } from '../status/verdict.js';
import type { DB } from '../warehouse/schema.js';
import { checkReadiness } from './readiness.js';
import { refreshGauges } from './refresh-gauges.js';
import { renderStatusPage } from './status-page.js';

export interface HttpServerOptions {
  port: number;
  /** Defaults to every interface: Prometheus and load balancers scrape from elsewhere. */
  host?: string;
  db: Kysely<DB>;
  redis: Redis | undefined;
  config: Config;
  clock: Clock;
  metrics: PipelineMetrics;
  logger: Logger;
}

export interface RunningHttpServer {
  port: number;
  close(): Promise<void>;
}

interface Reply {
  status: number;
  type: string;
  body: string;
}

const TEXT = 'text/plain; charset=utf-8';
const JSON_TYPE = 'application/json; charset=utf-8';

const json = (status: number, value: unknown): Reply => ({
  status,
  type: JSON_TYPE,
  body: `${JSON.stringify(value, null, 2)}\n`,
});

/** `/healthz`, `/readyz`, `/metrics`, `/status.json` and the status page `/`, on node:http. */
export async function startHttpServer(options: HttpServerOptions): Promise<RunningHttpServer> {
  const { db, redis, config, clock, metrics, logger } = options;
  const sources = { db, redis, config, clock };
  const secrets = knownSecrets(config);

  const routes: Record<string, () => Promise<Reply>> = {
    '/healthz': () => Promise.resolve({ status: 200, type: TEXT, body: 'ok\n' }),
    '/readyz': async () => {
      const readiness = scrubSecrets(await checkReadiness(db, redis), secrets);
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
    '/status.json': async () => json(200, await collectStatus(sources)),
    '/': async () => ({
      status: 200,
      type: 'text/html; charset=utf-8',
      body: renderStatusPage(await collectStatus(sources), thresholdsFor(config)),
    }),
  };

  const handle = async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    const path = new URL(request.url ?? '/', 'http://localhost').pathname;
    const route = routes[path === '/status' ? '/' : path];
    let reply: Reply;
    if (route === undefined)
      reply = {
        status: 404,
        type: TEXT,
        body: 'not found: try /, /status.json, /metrics, /healthz, /readyz\n',
      };
    else if (request.method !== 'GET' && request.method !== 'HEAD')
      reply = { status: 405, type: TEXT, body: 'GET only\n' };
    else {
      try {
        reply = await route();
      } catch (error) {
        logger.error({ err: error, path }, 'status endpoint failed');
        reply = { status: 500, type: TEXT, body: 'internal error: see the worker log\n' };
      }
    }
    response.writeHead(reply.status, { 'content-type': reply.type, 'cache-control': 'no-store' });
    response.end(request.method === 'HEAD' ? undefined : reply.body);
  };

  const server = createServer((request, response) => {
    handle(request, response).catch((error: unknown) => {
      logger.error({ err: error }, 'http handler crashed');
      response.destroy();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  logger.info({ port }, 'serving /healthz, /readyz, /metrics and the status page');
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        // Keep-alive sockets (a browser on the status page) would hold close() open otherwise.
        server.closeAllConnections();
      }),
  };
}
