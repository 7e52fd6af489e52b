import { date, defined, num, str, type AdminRoute, type Body } from './admin-body.js';
import { parseSchemaChanges } from './schema-faults.js';
import { worldAdminRoutes } from './admin-world.js';
import type { SimulatorControl } from './control.js';
import {
  HOSTILE_MEMBER_PROFILES,
  HOSTILE_VALUES,
  MALFORMED_INTENT_FIELDS,
  type FaultSettings,
} from './faults.js';
import type { SimResponse } from './http-types.js';
import { IntentTransitionError } from './intents.js';
import { jsonResponse } from './responses.js';

/**
 * The control surface over HTTP, under /_admin (outside /v1), behind `Authorization: Bearer <adminToken>`.
 * Bodies are JSON with the same camelCase names as the in-process SimulatorControl.
 */

const FAULT_KEYS = [
  'rateLimitRps',
  'serverErrorRate',
  'latencyMs',
  'truncateNext',
  'malformedNext',
  'shiftNextPageBy',
  'emptyFeedNext',
  'oversizedNext',
  'oversizedBytes',
] as const;

/** Only known fault settings: numbers (rateLimitRps may be null to lift the limit), hostileCheckIns. */
function faultPatch(body: Body): Partial<FaultSettings> {
  const patch: Partial<Record<(typeof FAULT_KEYS)[number], number | null>> = {};
  for (const key of FAULT_KEYS) {
    const value = body[key];
    if (typeof value === 'number' || (key === 'rateLimitRps' && value === null)) patch[key] = value;
    else if (value !== undefined) throw new TypeError(`${key} must be a number`);
  }
  const choice = <T extends string>(key: string, options: readonly T[]): T | null | undefined => {
    const value = body[key];
    if (value === undefined || value === null) return value;
    if (!(options as readonly unknown[]).includes(value))
      throw new TypeError(`${key} must be one of ${options.join(', ')}, or null`);
    return value as T;
  };
  const endlessPaging = choice('endlessPaging', ['empty-pages', 'same-page'] as const);
  if (endlessPaging !== undefined) (patch as Partial<FaultSettings>).endlessPaging = endlessPaging;
  const pageSizeAnswer = choice('pageSizeAnswer', ['zero', 'absent'] as const);
  if (pageSizeAnswer !== undefined) (patch as Partial<FaultSettings>).pageSizeAnswer = pageSizeAnswer;
  const malformedIntents = idMap(body, 'malformedIntents', MALFORMED_INTENT_FIELDS);
  if (malformedIntents !== undefined) (patch as Partial<FaultSettings>).malformedIntents = malformedIntents;
  const hostileCheckIns = idMap(body, 'hostileCheckIns', HOSTILE_VALUES);
  if (hostileCheckIns !== undefined) (patch as Partial<FaultSettings>).hostileCheckIns = hostileCheckIns;
  const hostileMembers = idMap(body, 'hostileMembers', HOSTILE_MEMBER_PROFILES);
  if (hostileMembers !== undefined) (patch as Partial<FaultSettings>).hostileMembers = hostileMembers;
  if (body['schemaChanges'] !== undefined)
    (patch as Partial<FaultSettings>).schemaChanges = parseSchemaChanges(body['schemaChanges']);
  return patch as Partial<FaultSettings>;
}

/** `{ "<id>": "<one of options>" }` with ids lower-cased; undefined when the key is absent. */
function idMap<T extends string>(
  body: Body,
  key: string,
  options: readonly T[],
): Record<string, T> | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'object' || value === null) throw new TypeError(`${key} must be an object`);
  const byId: Record<string, T> = {};
  for (const [id, choice] of Object.entries(value)) {
    if (!(options as readonly unknown[]).includes(choice))
      throw new TypeError(`${key}.${id} must be one of ${options.join(', ')}`);
    byId[id.toLowerCase()] = choice as T;
  }
  return byId;
}

function adminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    ...worldAdminRoutes(control),
    ...stateAndClockRoutes(control),
    ...checkInAdminRoutes(control),
    ...catalogAdminRoutes(control),
    ...memberAdminRoutes(control),
    ...intentAdminRoutes(control),
    ...credentialAdminRoutes(control),
    ...diagnosticAdminRoutes(control),
  ];
}

/** The simulator's state at a glance and its clock. */
function stateAndClockRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    [
      'GET',
      /^\/state$/,
      () => ({
        now: control.clock.now().toISOString(),
        checkIns: control.checkIns.count(),
        ongoing: control.checkIns.ongoingCount(),
        restaurants: control.restaurants.list().map((r) => ({ id: r['id'], name: r['name'] })),
        locations: control.locations.list().map((l) => ({ id: l['id'], name: l['name'] })),
        members: control.members.list(),
        app: {
          merchantId: control.app.merchantId,
          walletId: control.app.walletId,
          balance: control.app.balance(),
        },
      }),
    ],
    [
      'GET',
      /^\/clock$/,
      () => ({ now: control.clock.now().toISOString(), timeScale: control.clock.timeScale() }),
    ],
    [
      'POST',
      /^\/clock$/,
      (body) => {
        if (body['set'] !== undefined) control.clock.set(date(body, 'set'));
        if (typeof body['advanceMs'] === 'number') control.clock.advance(body['advanceMs']);
        if (body['freeze'] === true) control.clock.freeze();
        if (body['freeze'] === false) control.clock.unfreeze();
        if (body['timeScale'] !== undefined) {
          const scale = body['timeScale'];
          if (typeof scale !== 'number' || !(scale > 0 && scale <= 1_000_000))
            throw new TypeError('timeScale must be a number above 0 and at most 1000000');
          control.clock.setTimeScale(scale);
        }
        return { now: control.clock.now().toISOString(), timeScale: control.clock.timeScale() };
      },
    ],
  ];
}

/** Venue-feed check-ins: new, late, and the end of ongoing visits. */
function checkInAdminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    [
      'POST',
      /^\/check_ins$/,
      (body) => ({
        ids: control.checkIns.addNow(
          num(body, 'count', 1),
          defined({
            locationId: str(body, 'locationId'),
            ongoing: typeof body['ongoing'] === 'boolean' ? body['ongoing'] : undefined,
          }),
        ),
      }),
    ],
    [
      'POST',
      /^\/check_ins\/late$/,
      (body) => ({
        ids: control.checkIns.addLate(
          num(body, 'count', 1),
          defined({ from: date(body, 'from'), to: date(body, 'to'), locationId: str(body, 'locationId') }),
        ),
      }),
    ],
    ['POST', /^\/check_ins\/end_ongoing$/, () => ({ ended: control.checkIns.endOngoing() })],
  ];
}

/** The discovery catalogue: restaurants, locations and challenges. */
function catalogAdminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    ['GET', /^\/restaurants$/, () => control.restaurants.list()],
    ['POST', /^\/restaurants$/, (body) => control.restaurants.add(body)],
    [
      'PATCH',
      /^\/restaurants\/([^/]+)$/,
      (body, [id = '']) => (control.restaurants.update(id, body), { ok: true }),
    ],
    ['DELETE', /^\/restaurants\/([^/]+)$/, (_b, [id = '']) => (control.restaurants.remove(id), { ok: true })],
    ['GET', /^\/locations$/, () => control.locations.list()],
    ['POST', /^\/locations$/, (body) => control.locations.add(str(body, 'restaurantId') ?? '', body)],
    [
      'PATCH',
      /^\/locations\/([^/]+)$/,
      (body, [id = '']) => (control.locations.update(id, body), { ok: true }),
    ],
    ['DELETE', /^\/locations\/([^/]+)$/, (_b, [id = '']) => (control.locations.remove(id), { ok: true })],
    ['GET', /^\/challenges$/, () => control.challenges.list()],
    ['POST', /^\/challenges$/, (body) => control.challenges.add(str(body, 'restaurantId') ?? '', body)],
    [
      'PATCH',
      /^\/challenges\/([^/]+)$/,
      (body, [id = '']) => (control.challenges.update(id, body), { ok: true }),
    ],
    ['DELETE', /^\/challenges\/([^/]+)$/, (_b, [id = '']) => (control.challenges.remove(id), { ok: true })],
  ];
}

/** Members and their visits and tier. */
function memberAdminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    ['GET', /^\/members$/, () => control.members.list()],
    ['POST', /^\/members$/, () => ({ id: control.members.add() })],
    [
      'POST',
      /^\/members\/([^/]+)\/visits$/,
      (body, [id = '']) => ({
        id: control.members.addVisit(
          id,
          defined({ ongoing: typeof body['ongoing'] === 'boolean' ? body['ongoing'] : undefined }),
        ),
      }),
    ],
    [
      'POST',
      /^\/members\/([^/]+)\/end_visits$/,
      (_b, [id = '']) => ({ ended: control.members.endVisits(id) }),
    ],
    [
      'POST',
      /^\/members\/([^/]+)\/tier$/,
      (body, [id = '']) => (control.members.setTier(id, str(body, 'tier') ?? ''), { ok: true }),
    ],
  ];
}

/** Payment intents and their transitions. */
function intentAdminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    ['GET', /^\/intents$/, () => control.intents.list()],
    [
      'POST',
      /^\/intents$/,
      (body) =>
        control.intents.create(
          defined({
            amount: str(body, 'amount'),
            description: str(body, 'description'),
            payer: str(body, 'payer'),
            metadata:
              typeof body['metadata'] === 'object' && body['metadata'] !== null
                ? (body['metadata'] as Record<string, string>)
                : undefined,
          }),
        ),
    ],
    [
      'POST',
      /^\/intents\/([^/]+)\/(pay|cancel|refund|expire)$/,
      (_b, [id = '', action = '']) => {
        const act = action as 'pay' | 'cancel' | 'refund' | 'expire';
        return control.intents[act](id);
      },
    ],
  ];
}

/** API keys and refresh tokens: minted and revoked. */
function credentialAdminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    [
      'POST',
      /^\/api_keys$/,
      (body) => ({
        key: control.credentials.mintApiKey(Array.isArray(body['scopes']) ? body['scopes'].map(String) : []),
      }),
    ],
    [
      'POST',
      /^\/api_keys\/revoke$/,
      (body) => ({ revoked: control.credentials.revokeApiKey(str(body, 'key') ?? '') }),
    ],
    [
      'POST',
      /^\/refresh_tokens$/,
      (body) => ({
        refreshToken: control.credentials.issueRefreshToken(
          defined({
            memberId: str(body, 'memberId'),
            scopes: Array.isArray(body['scopes']) ? body['scopes'].map(String) : undefined,
          }),
        ),
      }),
    ],
    [
      'POST',
      /^\/refresh_tokens\/revoke$/,
      (body) => {
        const member = str(body, 'memberId');
        return {
          revoked:
            member !== undefined
              ? control.credentials.revokeRefreshTokensOf(member)
              : Number(control.credentials.revokeRefreshToken(str(body, 'token') ?? '')),
        };
      },
    ],
  ];
}

/** Faults, the request log, query stats and a live-mode tick. */
function diagnosticAdminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    ['GET', /^\/faults$/, () => control.faults.get()],
    ['POST', /^\/faults$/, (body) => control.faults.set(faultPatch(body))],
    ['DELETE', /^\/faults$/, () => (control.faults.reset(), control.faults.get())],
    ['GET', /^\/requests$/, () => control.requests.list()],
    ['DELETE', /^\/requests$/, () => (control.requests.clear(), { ok: true })],
    [
      'GET',
      /^\/stats$/,
      () => ({ lastQuery: control.stats.lastQuery(), checkInStoreBytes: control.stats.checkInStoreBytes() }),
    ],
    ['POST', /^\/live\/tick$/, () => control.live.tick()],
  ];
}

export function createAdminHandler(
  control: SimulatorControl,
  adminToken: string,
): (
  method: string,
  path: string,
  authorization: string | undefined,
  rawBody: string,
  query: URLSearchParams,
) => SimResponse {
  const routes = adminRoutes(control);
  return (method, path, authorization, rawBody, query) => {
    if (authorization !== `Bearer ${adminToken}`) return jsonResponse(401, { error: 'admin token required' });
    let parsed: unknown;
    try {
      parsed = rawBody.trim() === '' ? {} : JSON.parse(rawBody);
    } catch {
      return jsonResponse(400, { error: 'body must be JSON' });
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      return jsonResponse(400, { error: 'body must be a JSON object' });
    const body = parsed as Body;
    for (const [routeMethod, pattern, handler] of routes) {
      const match = pattern.exec(path);
      if (!match || routeMethod !== method) continue;
      try {
        return jsonResponse(200, handler(body, match.slice(1), query) ?? { ok: true });
      } catch (error) {
        if (error instanceof IntentTransitionError)
          return jsonResponse(400, { error: error.code, message: error.message });
        if (error instanceof RangeError) return jsonResponse(404, { error: error.message });
        if (error instanceof TypeError || error instanceof SyntaxError)
          return jsonResponse(400, { error: error.message });
        throw error;
      }
    }
    return jsonResponse(404, { error: `no admin route ${method} ${path}` });
  };
}
