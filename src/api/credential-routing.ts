import type { BudgetStream } from '../sync/budget-allocation.js';
import { API_STREAMS, STREAM_FACTS } from '../sync/stream-facts.js';
import type { CredentialKind } from './errors.js';

// The spec's authentication table, in the one place that decides which credential a path gets.
// The two credentials are not interchangeable: an API key on a bearer route is a 401, and a bearer
// token is never sent to a discovery route (it would leak a member token to routes that do not need it).
// Each family's requests are counted against one stream of the shared budget (spend-ledger.ts).
// Derived from each stream's routes and credential (`reads`, src/sync/stream-facts.ts).
export const ROUTE_FAMILIES: readonly {
  prefix: string;
  credential: CredentialKind;
  spendsOn: BudgetStream;
}[] = API_STREAMS.flatMap((stream) => {
  const { credential, routes } = STREAM_FACTS[stream].reads;
  return routes.map((prefix) => ({ prefix, credential, spendsOn: stream }));
});

function familyOf(path: string) {
  const clean = path.split('?')[0] ?? path;
  for (const family of ROUTE_FAMILIES) {
    if (clean === family.prefix || clean.startsWith(`${family.prefix}/`)) return family;
  }
  throw new Error(`no credential rule for path ${clean}: add its route family to credential-routing.ts`);
}

/** The credential a path (relative to the base URL, e.g. `/check_ins`) must carry. */
export function credentialForPath(path: string): CredentialKind {
  return familyOf(path).credential;
}

/** The stream of the shared budget a request to this path is counted against. */
export function budgetStreamForPath(path: string): BudgetStream {
  return familyOf(path).spendsOn;
}

/** `/locations/0b6…/open_hours` -> `/locations/{id}/open_hours`: bounded label values for metrics. */
export function routeTemplate(path: string): string {
  const clean = path.split('?')[0] ?? path;
  return clean
    .split('/')
    .map((segment) =>
      /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(segment) ? '{id}' : segment,
    )
    .join('/');
}
