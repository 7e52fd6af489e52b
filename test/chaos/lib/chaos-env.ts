import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RunningSimulator } from '../../../src/simulator/index.js';

/** The environment of a worker (or one-shot command) pointed at the test's simulator, database and Redis prefix. */
export function chaosEnv(options: {
  sim: RunningSimulator;
  databaseUrl: string;
  redisPrefix: string;
  startAt: Date;
  window: string;
  webhookUrl?: string;
  webhookSecret?: string;
  encryptionKey: string;
  rps: number;
  extra?: Record<string, string>;
}): Record<string, string> {
  const c = options.sim.credentials;
  return {
    DATABASE_URL: options.databaseUrl,
    REDIS_PREFIX: options.redisPrefix,
    SVC_API_BASE_URL: options.sim.baseUrl,
    SVC_API_KEY: c.apiKey,
    SVC_OAUTH_CLIENT_ID: c.clientId,
    SVC_OAUTH_CLIENT_SECRET: c.clientSecret,
    SVC_OAUTH_REFRESH_TOKEN: c.refreshToken,
    TOKEN_ENCRYPTION_KEY: options.encryptionKey,
    SVC_RATE_LIMIT_RPS: String(options.rps),
    CHECKINS_START_AT: options.startAt.toISOString(),
    CHECKINS_WINDOW: options.window,
    // History in windows of the same size: the scenarios need many windows in flight to kill and
    // restart around (coarse history windows are covered by the integration tests).
    CHECKINS_HISTORY_WINDOW: options.window,
    CHECKINS_EVERY: '2s',
    PAYMENT_INTENTS_EVERY: '1s',
    ALERTS_EVERY: '1s',
    HTTP_PORT: '0',
    LOG_LEVEL: 'info',
    ...(options.webhookUrl === undefined ? {} : { ALERT_WEBHOOK_URL: options.webhookUrl }),
    ...(options.webhookSecret === undefined ? {} : { ALERT_WEBHOOK_SECRET: options.webhookSecret }),
    ...options.extra,
  };
}

export function newEncryptionKey(): string {
  return randomBytes(32).toString('base64');
}

/** The secret values of a chaos environment: none may appear in any log. */
export function secretsOf(env: Record<string, string>): string[] {
  const names = [
    'SVC_API_KEY',
    'SVC_OAUTH_CLIENT_SECRET',
    'SVC_OAUTH_REFRESH_TOKEN',
    'TOKEN_ENCRYPTION_KEY',
    'ALERT_WEBHOOK_SECRET',
  ];
  return names
    .map((name) => env[name])
    .filter((value): value is string => value !== undefined && value.length >= 6);
}

export interface WebhookReceiver {
  url: string;
  /** Alert id of every POST received, in order (a redelivery appears twice). */
  received: string[];
  close(): Promise<void>;
}

/** A local alert receiver answering 204 to every POST. */
export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const received: string[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      try {
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { id?: unknown };
        if (typeof body.id === 'string') received.push(body.id);
      } catch {
        // not JSON: not an alert; still answered so the sender does not retry forever
      }
      response.statusCode = 204;
      response.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/alerts`,
    received,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Polls `check` until it returns true or `timeoutMs` passes; returns whether it became true. */
export async function waitFor(
  check: () => Promise<boolean>,
  timeoutMs: number,
  everyMs = 1_000,
): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      if (await check()) return true;
    } catch {
      // a service may be restarting; try again
    }
    if (Date.now() >= deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Shared by every chaos file so secrets.test.ts can look for them in every log of the suite. */
export const CHAOS_WEBHOOK_SECRET = 'whsec-chaos-7f3a9c2e5b1d4068';
export const CHAOS_ENCRYPTION_KEY = Buffer.from('chaos-suite-token-encryption-key').toString('base64');
