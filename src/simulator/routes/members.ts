import { requireBearer } from '../auth-checks.js';
import type { SimContext } from '../context.js';
import type { HostileMemberProfile } from '../faults.js';
import { checkInForm, membershipForms, statusForm, tagForms, userForm, walletForm } from '../forms.js';
import type { Route, SimRequest, SimResponse } from '../http-types.js';
import { pageOf, paginationWrapper, parsePaging, parseUuidParam } from '../params.js';
import { jsonResponse, resourceNotFound } from '../responses.js';
import { findMember, type MemberRecord } from '../world.js';

/** The hostileMembers fault: a profile with values the spec does not list. */
function hostileProfile(
  form: Record<string, unknown>,
  fault: HostileMemberProfile | undefined,
): Record<string, unknown> {
  switch (fault) {
    case undefined:
      return form;
    case 'unlisted-account-status':
      return { ...form, account_status: 'closed' };
    case 'numeric-pii':
      return { ...form, zipcode: 10014, phone_number: 5551234567 };
  }
}

/** Member routes: the subject is the access token's `sub`, never a path id. */
export function memberRoutes(ctx: SimContext): Route[] {
  const { world, credentials } = ctx;
  const member = (id: string): MemberRecord | undefined => findMember(world, id);

  const withMember =
    (scope: string, answer: (m: MemberRecord, request: SimRequest) => SimResponse) =>
    async (request: SimRequest): Promise<SimResponse> => {
      const auth = await requireBearer(credentials, request, scope, (id) => member(id) !== undefined);
      if (!auth.ok) return auth.response;
      const m = member(auth.value.memberId);
      return m ? { ...answer(m, request), credential: 'bearer' } : resourceNotFound('user');
    };

  return [
    {
      method: 'GET',
      pattern: /^\/users\/me$/,
      handler: withMember('read:profile', (m) =>
        jsonResponse(200, hostileProfile(userForm(m), ctx.faults.hostileMember(m.id))),
      ),
    },
    {
      method: 'GET',
      pattern: /^\/users\/me\/status$/,
      handler: withMember('read:profile', (m) => {
        const active = m.statuses.find((s) => s.state === 'active');
        return active
          ? jsonResponse(200, statusForm(m, active))
          : resourceNotFound('active status for this user');
      }),
    },
    {
      method: 'GET',
      pattern: /^\/users\/me\/wallets$/,
      handler: withMember('read:wallets', (m) => jsonResponse(200, { wallets: walletForm(m) })),
    },
    {
      method: 'GET',
      pattern: /^\/users\/me\/tags$/,
      handler: withMember('read:tags', (m) => jsonResponse(200, { tags: tagForms(m) })),
    },
    {
      method: 'GET',
      pattern: /^\/users\/me\/check_ins$/,
      handler: withMember('read:user_checkins', (m, request) => {
        const paging = parsePaging(request.query);
        if (!paging.ok) return paging.response;
        const page = pageOf(m.checkIns, paging.value).map((visit) =>
          checkInForm(world, visit, visit.id, 'short'),
        );
        return jsonResponse(200, {
          check_ins: page,
          pagination: paginationWrapper(m.checkIns.length, paging.value),
        });
      }),
    },
    {
      method: 'GET',
      pattern: /^\/users\/me\/memberships$/,
      handler: withMember('read:memberships', (m, request) => {
        // page_size is uncapped here; sort parameters are accepted and ignored.
        const paging = parsePaging(request.query, null);
        if (!paging.ok) return paging.response;
        const restaurant = parseUuidParam(request.query, 'restaurant');
        if (!restaurant.ok) return restaurant.response;
        const all = membershipForms(world, m).filter(
          (ms) => restaurant.value === null || ms['restaurant_id'] === restaurant.value,
        );
        return jsonResponse(200, {
          memberships: pageOf(all, paging.value),
          pagination: paginationWrapper(all.length, paging.value),
        });
      }),
    },
  ];
}
