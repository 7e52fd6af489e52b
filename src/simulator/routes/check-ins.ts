import { requireApiKey } from '../auth-checks.js';
import type { RangeQuery } from '../check-in-store.js';
import type { SimContext } from '../context.js';
import { checkInForm } from '../forms.js';
import type { Route, SimRequest, SimResponse } from '../http-types.js';
import type { HostileValue } from '../faults.js';
import { isUuid, paginationWrapper, parseIsoParam, parsePaging, parseUuidParam } from '../params.js';
import { forbiddenPage, invalidParameter, jsonResponse, resourceNotFound } from '../responses.js';
import { addCheckIn } from '../world-ops.js';

const hasUserAgent = (request: SimRequest): boolean => {
  const ua = request.headers['user-agent'];
  return typeof ua === 'string' && ua.trim() !== '';
};

const DEEP_JSON_MARKER = '__simulator_deep_json__';
const DEEP_JSON = `${'['.repeat(10_000)}"bottom"${']'.repeat(10_000)}`;

/** The venue feed: API key with read:checkins, newest first, AND-combined filters. */
export function checkInRoutes(ctx: SimContext): Route[] {
  return [
    { method: 'GET', pattern: /^\/check_ins$/, handler: (request) => listCheckIns(ctx, request) },
    {
      method: 'GET',
      pattern: /^\/check_ins\/([^/]+)$/,
      handler: (request, [id = '']) => getCheckIn(ctx, request, id),
    },
  ];
}

function listCheckIns(ctx: SimContext, request: SimRequest): SimResponse {
  const { world, credentials } = ctx;
  if (!hasUserAgent(request)) return forbiddenPage();
  const auth = requireApiKey(credentials, request, 'read:checkins');
  if (!auth.ok) return auth.response;
  const restaurant = parseUuidParam(request.query, 'restaurant');
  if (!restaurant.ok) return restaurant.response;
  const location = parseUuidParam(request.query, 'location');
  if (!location.ok) return location.response;
  const after = parseIsoParam(request.query, 'created_after');
  if (!after.ok) return after.response;
  const before = parseIsoParam(request.query, 'created_before');
  if (!before.ok) return before.response;
  const paging = parsePaging(request.query);
  if (!paging.ok) return paging.response;

  const scope = resolveScope(ctx, restaurant.value, location.value);
  const query: RangeQuery | null = scope && {
    scope,
    fromMs: after.value ?? -Infinity,
    toMs: before.value ?? Infinity,
  };
  if (query && paging.value.page >= 1) {
    const shift = ctx.faults.takePageShift();
    if (shift > 0) shiftRows(ctx, query, shift);
  }
  const result = query
    ? world.checkIns.page(query, paging.value.page, paging.value.pageSize)
    : { seqs: [], totalCount: 0, rowsExamined: 0 };
  ctx.stats.last = {
    path: '/check_ins',
    rowsExamined: result.rowsExamined,
    rowsReturned: result.seqs.length,
    totalCount: result.totalCount,
    storeSize: world.checkIns.count,
  };
  const records = result.seqs.flatMap((seq) => {
    const row = world.checkIns.get(seq);
    return row ? [checkInForm(world, row, world.checkInIds.encode(seq), 'full')] : [];
  });
  if (ctx.faults.takeMalformed()) corrupt(records);
  if (ctx.faults.takeEmptyFeed()) {
    return jsonResponse(200, { check_ins: [], pagination: paginationWrapper(0, paging.value) });
  }
  let deep = false;
  for (const record of records) {
    const hostile = ctx.faults.hostileCheckIn(String(record['id']));
    if (hostile === undefined) continue;
    makeHostile(record, hostile);
    deep ||= hostile === 'deep-json';
  }
  const response = jsonResponse(200, {
    check_ins: records,
    pagination: paginationWrapper(result.totalCount, paging.value),
  });
  return deep
    ? { ...response, body: response.body.replaceAll(`"${DEEP_JSON_MARKER}"`, DEEP_JSON) }
    : response;
}

function getCheckIn(ctx: SimContext, request: SimRequest, id: string): SimResponse {
  const { world, credentials } = ctx;
  if (!hasUserAgent(request)) return forbiddenPage();
  const auth = requireApiKey(credentials, request, 'read:checkins');
  if (!auth.ok) return auth.response;
  if (!isUuid(id)) return invalidParameter('id', 'expected a UUID');
  const seq = world.checkInIds.decode(id);
  const row = seq === null ? null : world.checkIns.get(seq);
  if (!row) return resourceNotFound('check_in');
  return jsonResponse(200, checkInForm(world, row, id.toLowerCase(), 'short'));
}

function resolveScope(
  ctx: SimContext,
  restaurantId: string | null,
  locationId: string | null,
): RangeQuery['scope'] | null {
  const { world } = ctx;
  // Removed venues stay filterable: their historical check-ins still exist.
  if (locationId !== null) {
    const location = world.index.locationById.get(locationId);
    if (!location) return null;
    if (restaurantId !== null && world.restaurants[location.restaurantIndex]?.id !== restaurantId)
      return null;
    return { kind: 'location', index: location.index };
  }
  if (restaurantId !== null) {
    const restaurant = world.index.restaurantById.get(restaurantId);
    return restaurant ? { kind: 'restaurant', index: restaurant.index } : null;
  }
  return { kind: 'all' };
}

/** Page-shift fault: rows newer than everything already served, inside the request's filter range. */
function shiftRows(ctx: SimContext, query: RangeQuery, count: number): void {
  const { world } = ctx;
  const newest = world.checkIns.newestIn(query);
  const base = newest ?? (Number.isFinite(query.fromMs) ? query.fromMs : ctx.clock.nowMs());
  const locationIndex =
    query.scope.kind === 'location'
      ? query.scope.index
      : query.scope.kind === 'restaurant'
        ? (world.locations.find((l) => l.restaurantIndex === (query.scope as { index: number }).index)
            ?.index ?? 0)
        : 0;
  for (let k = 1; k <= count; k++) {
    // Ties with the newest row still sort after it (inserted last), so they are newer for paging.
    const at = base + k < query.toMs ? base + k : base;
    addCheckIn(world, at, locationIndex, { ongoing: false });
  }
}

function makeHostile(record: Record<string, unknown>, value: HostileValue | undefined): void {
  const location = record['location'] as Record<string, unknown>;
  if (value === 'nul') location['name'] = `${String(location['name'])}\u0000`;
  if (value === 'lone-surrogate') location['name'] = `${String(location['name'])}\ud800`;
  if (value === 'year-0000') record['ended_at'] = '0000-06-01T12:00:00Z';
  const restaurant = location['restaurant'] as Record<string, unknown>;
  if (value === 'int-overflow') restaurant['price'] = 2 ** 31;
  // JSON.stringify cannot write 10,000 levels (it recurses); the marker is spliced after.
  if (value === 'deep-json') restaurant['tags'] = DEEP_JSON_MARKER;
}

function corrupt(records: Record<string, unknown>[]): void {
  const first = records[0];
  if (first) first['id'] = 'not-a-uuid';
  const second = records[1];
  if (second) delete second['created_at'];
}
