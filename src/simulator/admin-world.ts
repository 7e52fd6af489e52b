import { date, defined, type AdminRoute, type Body } from './admin-body.js';
import type { ChangeSettings } from './changes/change-settings.js';
import type { SimulatorControl } from './control.js';
import { isTruthKind } from './truth-log.js';
import type { WorldSize } from './world-size.js';

/** Admin routes for the world's size and change model, simulated time and the truth log. */

const SIZE_KEYS = ['restaurants', 'locations', 'challenges', 'members', 'openIntents'] as const;
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** A setting the control refuses (RangeError) is a bad request here, not a missing record (404). */
function asBadRequest<T>(run: () => T): T {
  try {
    return run();
  } catch (error) {
    if (error instanceof RangeError) throw new TypeError(error.message, { cause: error });
    throw error;
  }
}

/** An instant in a query parameter: ISO 8601 or epoch milliseconds. */
function instant(query: URLSearchParams, name: string, fallback: number): number {
  const raw = query.get(name);
  if (raw === null || raw === '') return fallback;
  const ms = /^-?\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (Number.isNaN(ms)) throw new TypeError(`${name} must be an ISO 8601 timestamp or epoch milliseconds`);
  return ms;
}

function sizeOf(body: Body): Partial<WorldSize> | undefined {
  const size: Partial<Record<(typeof SIZE_KEYS)[number], number>> = {};
  for (const key of SIZE_KEYS) {
    const value = body[key];
    if (value === undefined) continue;
    if (typeof value !== 'number') throw new TypeError(`${key} must be a number`);
    size[key] = value;
  }
  return Object.keys(size).length > 0 ? size : undefined;
}

function changesOf(body: Body): boolean | Partial<ChangeSettings> | undefined {
  const value = body['changes'];
  if (value === undefined || typeof value === 'boolean') return value;
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new TypeError('changes must be true, false or an object of change settings');
  return value;
}

export function worldAdminRoutes(control: SimulatorControl): AdminRoute[] {
  return [
    ['GET', /^\/world$/, () => control.world.info()],
    [
      'POST',
      /^\/world\/reset$/,
      (body) => {
        const seed = body['seed'];
        if (seed !== undefined && (typeof seed !== 'number' || !Number.isInteger(seed)))
          throw new TypeError('seed must be a whole number');
        const days = body['days'];
        const checkIns = body['checkIns'];
        for (const [name, value] of [
          ['days', days],
          ['checkIns', checkIns],
        ] as const)
          if (value !== undefined && (typeof value !== 'number' || !Number.isInteger(value) || value < 0))
            throw new TypeError(`${name} must be a whole number`);
        return asBadRequest(() =>
          control.world.reset(
            defined({
              seed: seed,
              anchor: body['anchor'] === undefined ? undefined : date(body, 'anchor'),
              days: days as number | undefined,
              checkIns: checkIns as number | undefined,
              size: sizeOf(body),
              changes: changesOf(body),
            }),
          ),
        );
      },
    ],
    [
      'POST',
      /^\/world\/advance$/,
      (body) => {
        const to = body['to'] === undefined ? undefined : asBadRequest(() => date(body, 'to'));
        if (to !== undefined) return asBadRequest(() => control.world.advanceTo(to));
        const byMs = body['byMs'];
        if (typeof byMs === 'number') return asBadRequest(() => control.world.advanceBy(byMs));
        throw new TypeError('give to (ISO 8601) or byMs (number)');
      },
    ],
    [
      'GET',
      /^\/truth$/,
      (_body, _params, query) => {
        const kind = query.get('kind');
        const id = (query.get('id') ?? '').toLowerCase();
        if (!isTruthKind(kind))
          throw new TypeError('kind must be one of the truth kinds (docs/simulator.md)');
        return {
          kind,
          id,
          lastChangedAt: iso(control.world.truth.lastChangedAt(kind, id)),
          changeTimes: control.world.truth.changeTimes(kind, id).map((ms) => iso(ms)),
        };
      },
    ],
    [
      'GET',
      /^\/truth\/changes$/,
      (_body, _params, query) => {
        const since = instant(query, 'since', -Infinity);
        const until = instant(query, 'until', Infinity);
        const limit = Number(query.get('limit') ?? 1000);
        if (!Number.isInteger(limit) || limit < 1)
          throw new TypeError('limit must be a positive whole number');
        const changes: { kind: string; id: string; at: string | null }[] = [];
        let more = false;
        for (const change of control.world.truth.changesSince(since, until)) {
          if (changes.length === limit) {
            more = true;
            break;
          }
          changes.push({ kind: change.kind, id: change.id, at: iso(change.atMs) });
        }
        return { changes, more };
      },
    ],
    [
      'GET',
      /^\/truth\/counts$/,
      (_body, _params, query) =>
        control.world.truth.counts(instant(query, 'since', -Infinity), instant(query, 'until', Infinity)),
    ],
    [
      'POST',
      /^\/members\/refresh_tokens$/,
      (body) => {
        const ids = body['memberIds'];
        if (ids !== undefined && !Array.isArray(ids)) throw new TypeError('memberIds must be a list');
        const count = body['count'];
        if (count !== undefined && (typeof count !== 'number' || !Number.isInteger(count) || count < 0))
          throw new TypeError('count must be a whole number');
        return {
          grants: control.members.issueRefreshTokens(defined({ memberIds: ids?.map(String), count: count })),
        };
      },
    ],
  ];
}
