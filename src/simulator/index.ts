import type { AddressInfo } from 'node:net';
import { createSimulatorServer } from './server.js';
import {
  createSimulatorHost,
  type InProcessResponse,
  type SimulatorCredentials,
  type SimulatorOptions,
} from './simulator.js';
import type { SimulatorControl } from './control.js';
import type { IncomingSimRequest } from './request-handler.js';

export type { SimulatorControl, PaymentIntentJson, MemberInfo, MemberGrant } from './control.js';
export type { WorldControl, WorldInfo, WorldReset, AdvanceResult } from './control-world.js';
export type { FaultSettings } from './faults.js';
export type { RequestLogEntry } from './request-log.js';
export type { QueryStats } from './context.js';
export type { ClockSource, SimulatorClock } from './clock.js';
export type { IncomingSimRequest } from './request-handler.js';
export type { TruthKind, TruthChange, TruthReader } from './truth-log.js';
export type { ChangeSettings, MemberActivityClass } from './changes/change-settings.js';
export type { WorldSize } from './world-size.js';
export type { Simulator, SimulatorOptions, SimulatorCredentials, InProcessResponse } from './simulator.js';
export { createSimulatorClock } from './clock.js';
export { createSimulator } from './simulator.js';
export { TRUTH_KINDS } from './truth-log.js';
export { DEFAULT_CHANGE_SETTINGS } from './changes/change-settings.js';
export { DEFAULT_WORLD_SIZE, PRODUCTION_WORLD_SIZE } from './world-size.js';
export { worldOptionsFromFlags } from './simulator-flags.js';
export { DEFAULT_SIMULATOR_PORT } from './default-port.js';

export interface RunningSimulator {
  baseUrl: string;
  credentials: SimulatorCredentials;
  control: SimulatorControl;
  /** Answers a request in-process, without the socket (same handling as over HTTP). */
  handle(request: IncomingSimRequest): Promise<InProcessResponse>;
  close(): Promise<void>;
}

export async function startSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  const host = createSimulatorHost(options);
  const server = createSimulatorServer((request) => host.handleRaw(request));
  const listenHost = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, listenHost, () => resolve());
  });
  if (options.live) host.startLive();
  const { port } = server.address() as AddressInfo;
  const sim = host.simulator;
  return {
    baseUrl: `http://${listenHost}:${port}/v1`,
    credentials: sim.credentials,
    control: sim.control,
    handle: (request) => sim.handle(request),
    close: async () => {
      sim.close();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

function worldLine(sim: RunningSimulator): string {
  const info = sim.control.world.info();
  const { size } = info;
  const n = (value: number): string => value.toLocaleString('en-US');
  const changing = info.changes ? `changing by itself, time ×${info.timeScale}` : 'static';
  return [
    `  world           ${n(size.restaurants)} restaurants, ${n(size.locations)} locations, ${n(size.challenges)} challenges,`,
    `                  ${n(size.members)} members, ${n(size.openIntents)} open intents, ${n(size.checkIns)} check-ins; ${changing}`,
    `                  members' refresh tokens: POST /_admin/members/refresh_tokens`,
  ].join('\n');
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
    worldLine(sim),
    '',
    'Environment for rewards-etl:',
    `SVC_API_BASE_URL=${sim.baseUrl}`,
    `SVC_API_KEY=${c.apiKey}`,
    `SVC_OAUTH_CLIENT_ID=${c.clientId}`,
    `SVC_OAUTH_CLIENT_SECRET=${c.clientSecret}`,
    `SVC_OAUTH_REFRESH_TOKEN=${c.refreshToken}`,
    `SVC_OAUTH_REDIRECT_URI=${c.redirectUri}`,
    '',
  ].join('\n');
}
