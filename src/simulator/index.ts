import type { AddressInfo } from 'node:net';
import { createAdminHandler } from './admin.js';
import { createSimulatorClock, type ClockSource, type SimulatorClock } from './clock.js';
import type { SimContext } from './context.js';
import { createControl, type SimulatorControl } from './control.js';
import { API_KEY_SCOPES, CredentialStore } from './credentials.js';
import { generateWorld } from './data/generate-world.js';
import { FaultInjector } from './faults.js';
import { createLiveMode } from './live-mode.js';
import { createPrng } from './prng.js';
import { RequestLog } from './request-log.js';
import { challengeRoutes } from './routes/challenges.js';
import { checkInRoutes } from './routes/check-ins.js';
import { discoveryRoutes } from './routes/discovery.js';
import { memberRoutes } from './routes/members.js';
import { oauthRoutes } from './routes/oauth.js';
import { paymentRoutes } from './routes/payments.js';
import { createSimulatorServer } from './server.js';

export type { SimulatorControl, PaymentIntentJson, MemberInfo } from './control.js';
export type { FaultSettings } from './faults.js';
export type { RequestLogEntry } from './request-log.js';
export type { QueryStats } from './context.js';
export type { ClockSource, SimulatorClock } from './clock.js';
export { createSimulatorClock } from './clock.js';

export interface SimulatorOptions {
  port?: number;
  host?: string;
  seed?: number;
  /** Number of generated venue-feed check-ins. Default 20,000. */
  checkIns?: number;
  /** End of the generated period; default the clock's now. Same seed + anchor => same data. */
  anchor?: Date;
  /** Length of the generated period. Default 30. */
  days?: number;
  live?: boolean;
  /** Time source under the simulator clock (default real time); the clock stays settable on top. */
  clock?: ClockSource;
}

export interface SimulatorCredentials {
  /** `read:checkins`, `read:restaurant_challenges` and `read:balance`. */
  apiKey: string;
  apiKeyNoScopes: string;
  clientId: string;
  clientSecret: string;
  redirectUri: string;
  /** A valid refresh token for the default member with every read:* member scope. */
  refreshToken: string;
  merchantId: string;
  appWalletId: string;
  adminToken: string;
}

export interface RunningSimulator {
  baseUrl: string;
  credentials: SimulatorCredentials;
  control: SimulatorControl;
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const seed = options.seed ?? 42;
  const clock: SimulatorClock = createSimulatorClock(options.clock);
  const anchorMs = options.anchor?.getTime() ?? Math.floor(clock.nowMs() / 1000) * 1000;
  const days = options.days ?? 30;
  const checkInCount = options.checkIns ?? 20_000;
  const world = generateWorld({ seed, anchorMs, days, checkIns: checkInCount });
  const credentials = new CredentialStore(seed, clock);
  const startedAt = performance.now();
  const ctx: SimContext = {
    world,
    clock,
    credentials,
    faults: new FaultInjector(seed, () => performance.now() - startedAt),
    stats: { last: null },
    runtimeIds: createPrng(seed, 'runtime'),
  };
  const apiKey = credentials.mintApiKey(API_KEY_SCOPES);
  const apiKeyNoScopes = credentials.mintApiKey([]);
  const defaultMember = world.members[0];
  if (!defaultMember) throw new Error('no default member generated');
  const refreshToken = credentials.mintRefreshToken(
    defaultMember.id,
    world.app.clientId,
    world.app.allowedScopes,
  );
  const log = new RequestLog();
  const live = createLiveMode(ctx, checkInCount / days);
  const control = createControl(ctx, log, live);
  const routes = [
    ...discoveryRoutes(ctx),
    ...checkInRoutes(ctx),
    ...memberRoutes(ctx),
    ...paymentRoutes(ctx),
    ...challengeRoutes(ctx),
    ...oauthRoutes(ctx),
  ];
  const server = createSimulatorServer(ctx, routes, log, createAdminHandler(control, credentials.adminToken));
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  if (options.live) live.start(1000);
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${port}/v1`,
    credentials: {
      apiKey,
      apiKeyNoScopes,
      clientId: world.app.clientId,
      clientSecret: world.app.clientSecret,
      redirectUri: world.app.redirectUris[0] ?? '',
      refreshToken,
      merchantId: world.app.merchantId,
      appWalletId: world.app.wallet.id,
      adminToken: credentials.adminToken,
    },
    control,
    close: async () => {
      live.stop();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

/** What `rewards-etl simulator` prints. These are simulator-only test credentials, shown on purpose. */
export function formatSimulatorBanner(sim: RunningSimulator): string {
  const c = sim.credentials;
  const adminUrl = sim.baseUrl.replace(/\/v1$/, '/_admin');
  return [
    'rewards-etl partner-API simulator',
    `  base URL        ${sim.baseUrl}`,
    `  API key         ${c.apiKey}   (read:checkins read:restaurant_challenges read:balance)`,
    `  OAuth client    ${c.clientId}`,
    `  client secret   ${c.clientSecret}`,
    `  redirect URI    ${c.redirectUri}`,
    `  refresh token   ${c.refreshToken}`,
    `  merchant id     ${c.merchantId}`,
    `  app wallet      ${c.appWalletId}`,
    `  admin           ${adminUrl}  (Authorization: Bearer ${c.adminToken})`,
    '',
    'Environment for rewards-etl:',
    `SVC_API_BASE_URL=${sim.baseUrl}`,
    `SVC_API_KEY=${c.apiKey}`,
    `SVC_OAUTH_CLIENT_ID=${c.clientId}`,
    `SVC_OAUTH_CLIENT_SECRET=${c.clientSecret}`,
    `SVC_OAUTH_REFRESH_TOKEN=${c.refreshToken}`,
    '',
  ].join('\n');
}
