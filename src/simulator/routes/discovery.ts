import { requireApiKey } from '../auth-checks.js';
import type { SimContext } from '../context.js';
import { locationReducedForm, restaurantListForm } from '../forms.js';
import type { Route } from '../http-types.js';
import { isUuid, pageOf, paginationWrapper, parsePaging } from '../params.js';
import { invalidParameter, jsonResponse, resourceNotFound } from '../responses.js';
import { findLocation } from '../world.js';

/** Discovery: any valid API key, no scope. */
export function discoveryRoutes(ctx: SimContext): Route[] {
  const { world, credentials } = ctx;
  const locationOr = (id: string) => {
    if (!isUuid(id)) return { ok: false as const, response: invalidParameter('id', 'expected a UUID') };
    const location = findLocation(world, id.toLowerCase());
    return location
      ? { ok: true as const, location }
      : { ok: false as const, response: resourceNotFound('location') };
  };
  return [
    {
      method: 'GET',
      pattern: /^\/restaurants$/,
      handler: (request) => {
        const auth = requireApiKey(credentials, request, null);
        if (!auth.ok) return auth.response;
        const paging = parsePaging(request.query);
        if (!paging.ok) return paging.response;
        const visible = world.restaurants.filter((r) => !r.removed);
        return jsonResponse(200, {
          restaurants: pageOf(visible, paging.value).map(restaurantListForm),
          pagination: paginationWrapper(visible.length, paging.value),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/locations\/([^/]+)$/,
      handler: (request, [id = '']) => {
        const auth = requireApiKey(credentials, request, null);
        if (!auth.ok) return auth.response;
        const found = locationOr(id);
        return found.ok ? jsonResponse(200, locationReducedForm(world, found.location)) : found.response;
      },
    },
    {
      method: 'GET',
      pattern: /^\/locations\/([^/]+)\/open_hours$/,
      handler: (request, [id = '']) => {
        const auth = requireApiKey(credentials, request, null);
        if (!auth.ok) return auth.response;
        const found = locationOr(id);
        if (!found.ok) return found.response;
        // Decision (spec: shape not shown): weekly periods in the location's local time.
        return jsonResponse(200, {
          object: 'open_hours',
          location: found.location.id,
          time_zone: found.location.timeZone,
          open_hours: found.location.openHours,
        });
      },
    },
  ];
}
