import type { IncomingHttpHeaders } from 'node:http';

export interface SimRequest {
  method: string;
  /** Path below the version prefix, e.g. `/check_ins`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
}

export interface SimResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** How the caller authenticated, for the request log. */
  credential?: CredentialKind;
}

export type CredentialKind = 'api_key' | 'bearer' | 'none' | 'client_secret';

export type RouteHandler = (request: SimRequest, params: string[]) => SimResponse | Promise<SimResponse>;

export interface Route {
  method: string;
  pattern: RegExp;
  handler: RouteHandler;
}
