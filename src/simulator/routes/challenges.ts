import { requireApiKey } from '../auth-checks.js';
import type { SimContext } from '../context.js';
import { balanceForm, challengeForm } from '../forms.js';
import type { Route } from '../http-types.js';
import { pageOf, paginationWrapper, parsePaging, parseUuidParam } from '../params.js';
import { invalidParameter, jsonResponse } from '../responses.js';

export function challengeRoutes(ctx: SimContext): Route[] {
  const { world, credentials } = ctx;
  return [
    {
      method: 'GET',
      pattern: /^\/challenges$/,
      handler: (request) => {
        const auth = requireApiKey(credentials, request, 'read:restaurant_challenges');
        if (!auth.ok) return auth.response;
        const restaurant = parseUuidParam(request.query, 'restaurant');
        if (!restaurant.ok) return restaurant.response;
        // Decision (spec: not shown): a missing restaurant is a 400 invalid_parameter.
        if (restaurant.value === null) return invalidParameter('restaurant', 'this parameter is required');
        const location = parseUuidParam(request.query, 'location');
        if (!location.ok) return location.response;
        const paging = parsePaging(request.query);
        if (!paging.ok) return paging.response;
        const own = world.index.challengesByRestaurant.get(restaurant.value) ?? [];
        const matching = own.filter(
          (c) => location.value === null || c.locationIds === null || c.locationIds.includes(location.value),
        );
        return jsonResponse(200, {
          challenges: pageOf(matching, paging.value).map(challengeForm),
          pagination: paginationWrapper(matching.length, paging.value),
        });
      },
    },
    {
      method: 'GET',
      pattern: /^\/balance$/,
      handler: (request) => {
        const auth = requireApiKey(credentials, request, 'read:balance');
        return auth.ok ? jsonResponse(200, balanceForm(world)) : auth.response;
      },
    },
  ];
}
