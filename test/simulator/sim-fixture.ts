import { createHash, randomBytes } from 'node:crypto';
import { startSimulator, type RunningSimulator, type SimulatorOptions } from '../../src/simulator/index.js';

export const ANCHOR = new Date('2025-03-01T18:00:00.000Z');

/** A simulator at a fixed anchor whose clock stands still unless a test moves it. */
export function startFixedSimulator(options: SimulatorOptions = {}): Promise<RunningSimulator> {
  return startSimulator({
    seed: 11,
    anchor: ANCHOR,
    checkIns: 5_000,
    days: 10,
    clock: { now: () => ANCHOR },
    rhythm: 'daily', // a fixed clock: the rhythm's peaks fall at the same rows every run
    ...options,
  });
}

export interface CallOptions {
  apiKey?: string;
  bearer?: string;
  userAgent?: string | null;
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface CallResult {
  status: number;
  headers: Headers;
  text: string;
  json: any;
}

export async function call(
  sim: RunningSimulator,
  path: string,
  options: CallOptions = {},
): Promise<CallResult> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.userAgent !== null) headers['user-agent'] = options.userAgent ?? 'rewards-etl-tests/1.0';
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  if (options.bearer !== undefined) headers['authorization'] = `Bearer ${options.bearer}`;
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  const url = path.startsWith('http') ? path : `${sim.baseUrl}${path}`;
  const init: RequestInit = { method: options.method ?? 'GET', headers };
  if (options.body !== undefined) init.body = JSON.stringify(options.body);
  const response = await fetch(url, init);
  const text = await response.text();
  let json: unknown;
  try {
    json = text === '' ? undefined : JSON.parse(text);
  } catch {
    json = undefined; // a non-JSON body (HTML, truncated): tests read `text`
  }
  return { status: response.status, headers: response.headers, text, json };
}

/** Raw call without fetch's automatic User-Agent (fetch always sends one). */
export async function callWithoutUserAgent(
  sim: RunningSimulator,
  path: string,
  apiKey: string,
  emptyUa: boolean,
) {
  const { request } = await import('node:http');
  const url = new URL(`${sim.baseUrl}${path}`);
  return new Promise<{ status: number; contentType: string; body: string }>((resolve, reject) => {
    const headers: Record<string, string> = { 'x-api-key': apiKey };
    if (emptyUa) headers['user-agent'] = '';
    const req = request(url, { method: 'GET', headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, contentType: String(res.headers['content-type']), body }),
      );
    });
    req.on('error', reject);
    req.end();
  });
}

export async function tokenRequest(sim: RunningSimulator, form: Record<string, string>) {
  const response = await fetch(`${sim.baseUrl}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', 'user-agent': 'tests' },
    body: new URLSearchParams(form).toString(),
  });
  return { status: response.status, json: (await response.json()) as any };
}

export async function refresh(sim: RunningSimulator, refreshToken: string) {
  return tokenRequest(sim, {
    grant_type: 'refresh_token',
    refresh_token: refreshToken,
    client_id: sim.credentials.clientId,
    client_secret: sim.credentials.clientSecret,
  });
}

export function pkcePair(): { verifier: string; challenge: string } {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function authorize(sim: RunningSimulator, params: Record<string, string>) {
  const url = new URL(`${sim.baseUrl}/oauth/authorize`);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  const response = await fetch(url, { redirect: 'manual', headers: { 'user-agent': 'tests' } });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
export const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/** The same call as `call`, answered in-process (no socket): what a discrete-event bench does. */
export async function callIn(
  sim: Pick<RunningSimulator, 'handle'>,
  path: string,
  options: Omit<CallOptions, 'userAgent'> = {},
): Promise<{ status: number; headers: Record<string, string>; text: string; json: any }> {
  const headers: Record<string, string> = { 'user-agent': 'rewards-etl-tests/1.0', ...options.headers };
  if (options.apiKey !== undefined) headers['x-api-key'] = options.apiKey;
  if (options.bearer !== undefined) headers['authorization'] = `Bearer ${options.bearer}`;
  const answer = await sim.handle({
    method: options.method ?? 'GET',
    url: path.startsWith('/_admin') ? path : `/v1${path}`,
    headers,
    ...(options.body === undefined ? {} : { body: JSON.stringify(options.body) }),
  });
  let json: unknown;
  try {
    json = answer.body === '' ? undefined : JSON.parse(answer.body);
  } catch {
    json = undefined;
  }
  return { status: answer.status, headers: answer.headers, text: answer.body, json };
}
