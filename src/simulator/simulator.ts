import { createAdminHandler } from './admin.js';
import { startChangeModel, type ChangeModel } from './changes/change-model.js';
import { resolveChangeSettings, type ChangeSettings } from './changes/change-settings.js';
import { createSimulatorClock, type ClockSource, type SimulatorClock } from './clock.js';
import type { SimContext } from './context.js';
import { createControl, type SimulatorControl } from './control.js';
import { createWorldControl, type WorldInfo, type WorldReset } from './control-world.js';
import { API_KEY_SCOPES, CredentialStore } from './credentials.js';
import { generateWorld } from './data/generate-world.js';
import { defaultRhythm, type Rhythm } from './data/rhythm.js';
import { FaultInjector } from './faults.js';
import { scheduleExpiryTruth } from './intents.js';
import { createLiveMode, type LiveMode } from './live-mode.js';
import { createPrng } from './prng.js';
import { createRequestHandler, type HandledResponse, type IncomingSimRequest } from './request-handler.js';
import { RequestLog } from './request-log.js';
import { challengeRoutes } from './routes/challenges.js';
import { checkInRoutes } from './routes/check-ins.js';
import { discoveryRoutes } from './routes/discovery.js';
import { memberRoutes } from './routes/members.js';
import { oauthRoutes } from './routes/oauth.js';
import { paymentRoutes } from './routes/payments.js';
import type { TruthLogOptions } from './truth-log.js';
import type { WorldSize } from './world-size.js';
import type { World } from './world.js';

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
  /** Restaurants, locations, challenges, members, open intents; unset: the small fixture world. */
  size?: Partial<WorldSize>;
  /**
   * The world changes by itself as simulated time passes (docs/simulator.md, "Change model"):
   * true for the default rates, or some rates; unset or false: a static world, as before.
   */
  changes?: boolean | Partial<ChangeSettings>;
  /** Simulated milliseconds per real millisecond. Default 1. */
  timeScale?: number;
  /** Bounds of the truth log. */
  truth?: TruthLogOptions;
  live?: boolean;
  /** Time source under the simulator clock (default real time); the clock stays settable on top. */
  clock?: ClockSource;
  /** How visits spread over a local day; default `SIMULATOR_RHYTHM`, else `daily`. */
  rhythm?: Rhythm;
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

/** An answer to a request made without a socket. */
export interface InProcessResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** The simulator without a server: what benchmarks driving hundreds of thousands of requests call. */
export interface Simulator {
  credentials: SimulatorCredentials;
  control: SimulatorControl;
  /** Answers one request (`/v1/...` or `/_admin/...`) exactly as the HTTP server would. */
  handle(request: IncomingSimRequest): Promise<InProcessResponse>;
  /** Stops live mode's timer; nothing else holds resources. */
  close(): void;
}

/** The generated world and everything built on it; replaced whole by a reset. */
interface WorldCore {
  ctx: SimContext;
  control: SimulatorControl;
  live: LiveMode;
  refreshToken: string;
  handle(request: IncomingSimRequest): Promise<HandledResponse>;
}

interface WorldSettings {
  seed: number;
  anchorMs: number;
  days: number;
  checkIns: number;
  size: Partial<WorldSize>;
  changes: ChangeSettings | null;
  rhythm: Rhythm;
}

export interface SimulatorHost {
  simulator: Simulator;
  /** With the oversize fault's padding left to the caller (the HTTP server streams it). */
  handleRaw(request: IncomingSimRequest): Promise<HandledResponse>;
  startLive(): void;
}

function changeSettingsOf(changes: SimulatorOptions['changes']): ChangeSettings | null {
  if (changes === undefined || changes === false) return null;
  return resolveChangeSettings(changes === true ? {} : changes);
}

/** What every world of one simulator shares: clock, credentials, faults and request log outlive a reset. */
interface HostParts {
  clock: SimulatorClock;
  credentials: CredentialStore;
  faults: FaultInjector;
  log: RequestLog;
  truth: TruthLogOptions | undefined;
}

export function createSimulatorHost(options: SimulatorOptions = {}): SimulatorHost {
  const clock: SimulatorClock = createSimulatorClock(options.clock, options.timeScale ?? 1);
  const firstSeed = options.seed ?? 42;
  const credentials = new CredentialStore(firstSeed, clock);
  const startedAt = performance.now();
  const faults = new FaultInjector(firstSeed, () => performance.now() - startedAt);
  const parts: HostParts = { clock, credentials, faults, log: new RequestLog(), truth: options.truth };
  const apiKey = credentials.mintApiKey(API_KEY_SCOPES);
  const apiKeyNoScopes = credentials.mintApiKey([]);
  let liveRunning = false;

  const build = (settings: WorldSettings): WorldCore =>
    buildWorldCore(parts, settings, (reset) => resetWorld(settings, reset));

  const resetWorld = (current: WorldSettings, reset: WorldReset): WorldInfo => {
    const next: WorldSettings = {
      seed: reset.seed ?? current.seed,
      anchorMs: reset.anchor?.getTime() ?? current.anchorMs,
      days: reset.days ?? current.days,
      checkIns: reset.checkIns ?? current.checkIns,
      size: { ...current.size, ...reset.size },
      changes: reset.changes === undefined ? current.changes : changeSettingsOf(reset.changes),
      rhythm: current.rhythm,
    };
    const built = build(next); // throws before anything is replaced when a setting is bad
    core.live.stop();
    core = built;
    if (liveRunning) core.live.start(1000);
    return core.control.world.info();
  };

  let core = build({
    seed: firstSeed,
    anchorMs: options.anchor?.getTime() ?? Math.floor(clock.nowMs() / 1000) * 1000,
    days: options.days ?? 30,
    checkIns: options.checkIns ?? 20_000,
    size: options.size ?? {},
    changes: changeSettingsOf(options.changes),
    rhythm: options.rhythm ?? defaultRhythm(),
  });

  const simulator: Simulator = {
    credentials: simulatorCredentials(() => core, {
      apiKey,
      apiKeyNoScopes,
      adminToken: credentials.adminToken,
    }),
    control: currentControl(() => core),
    handle: async (request) => {
      const answer = await core.handle(request);
      const body = answer.padBytes > 0 ? answer.body + ' '.repeat(answer.padBytes) : answer.body;
      return { status: answer.status, headers: answer.headers, body };
    },
    close: () => {
      liveRunning = false;
      core.live.stop();
    },
  };
  return {
    simulator,
    handleRaw: (request) => core.handle(request),
    startLive: () => {
      liveRunning = true;
      core.live.start(1000);
    },
  };
}

/** Generates a world and builds its context, change model, control surface and request handler. */
function buildWorldCore(
  parts: HostParts,
  settings: WorldSettings,
  resetWorld: (reset: WorldReset) => WorldInfo,
): WorldCore {
  const { clock, credentials, faults, log } = parts;
  const world = generateWorld({
    seed: settings.seed,
    anchorMs: settings.anchorMs,
    days: settings.days,
    checkIns: settings.checkIns,
    size: settings.size,
    rhythm: settings.rhythm,
    ...(settings.changes ? { memberActivity: settings.changes.memberActivity } : {}),
    ...(parts.truth ? { truth: parts.truth } : {}),
  });
  const ctx: SimContext = {
    world,
    clock,
    credentials,
    faults,
    stats: { last: null },
    runtimeIds: createPrng(settings.seed, 'runtime'),
  };
  const startMs = Math.max(world.anchorMs, clock.nowMs());
  world.timeline.runUntil(startMs);
  for (const intent of world.intents.values()) scheduleExpiryTruth(world, intent);
  const model: ChangeModel | null = settings.changes
    ? startChangeModel(world, settings.changes, {
        startMs,
        defaultFeedCheckInsPerDay: settings.checkIns / Math.max(1, settings.days),
      })
    : null;
  const defaultMember = world.members[0];
  if (!defaultMember) throw new Error('no default member generated');
  const refreshToken = credentials.mintRefreshToken(
    defaultMember.id,
    world.app.clientId,
    world.app.allowedScopes,
  );
  const live = createLiveMode(ctx, settings.checkIns / Math.max(1, settings.days), model);
  const worldControl = createWorldControl(ctx, model, resetWorld);
  const control = withCatchUp(createControl(ctx, log, live, worldControl), world, clock);
  const routes = [
    ...discoveryRoutes(ctx),
    ...checkInRoutes(ctx),
    ...memberRoutes(ctx),
    ...paymentRoutes(ctx),
    ...challengeRoutes(ctx),
    ...oauthRoutes(ctx),
  ];
  const handle = createRequestHandler(ctx, routes, log, createAdminHandler(control, credentials.adminToken));
  return { ctx, control, live, refreshToken, handle };
}

/** The credentials of the current world: the app's (and the default member's token) change with a reset. */
function simulatorCredentials(
  current: () => WorldCore,
  fixed: Pick<SimulatorCredentials, 'apiKey' | 'apiKeyNoScopes' | 'adminToken'>,
): SimulatorCredentials {
  const app = (): World['app'] => current().ctx.world.app;
  return {
    apiKey: fixed.apiKey,
    apiKeyNoScopes: fixed.apiKeyNoScopes,
    get clientId() {
      return app().clientId;
    },
    get clientSecret() {
      return app().clientSecret;
    },
    get redirectUri() {
      return app().redirectUris[0] ?? '';
    },
    get refreshToken() {
      return current().refreshToken;
    },
    get merchantId() {
      return app().merchantId;
    },
    get appWalletId() {
      return app().wallet.id;
    },
    adminToken: fixed.adminToken,
  };
}

/** Always the current world's control, also after a reset. */
function currentControl(current: () => WorldCore): SimulatorControl {
  return new Proxy({} as SimulatorControl, {
    get: (_target, key) => current().control[key as keyof SimulatorControl],
    has: (_target, key) => key in current().control,
    ownKeys: () => Reflect.ownKeys(current().control),
    getOwnPropertyDescriptor: (_target, key) => ({
      ...Reflect.getOwnPropertyDescriptor(current().control, key),
      configurable: true,
    }),
  });
}

/** The simulator in this process, without a socket (see `startSimulator` for the HTTP server). */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  const host = createSimulatorHost(options);
  if (options.live) host.startLive();
  return host.simulator;
}

/**
 * Every control operation first applies the changes due by the clock's now, so what it reads or does
 * happens in the world as it is at that moment, as a request would see it.
 */
function withCatchUp<T extends object>(target: T, world: World, clock: SimulatorClock): T {
  const wrap = (value: unknown): unknown => {
    if (typeof value === 'function')
      return (...args: unknown[]) => {
        world.timeline.runUntil(clock.nowMs());
        return (value as (...a: unknown[]) => unknown)(...args);
      };
    if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype)
      return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, wrap(inner)]));
    return value;
  };
  return wrap(target) as T;
}
