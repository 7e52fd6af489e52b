import { Agent, request, type Dispatcher } from 'undici';
import type { RawResponse, ResponseHeaders } from './classify-response.js';
import {
  InvalidJsonError,
  NetworkError,
  RequestTimeoutError,
  ResponseTooLargeError,
  type RequestSummary,
} from './errors.js';

// The single HTTP layer: one keep-alive undici Agent per process, timeouts on every phase, the
// caller's AbortSignal, and a User-Agent on every request (the partner's edge answers a missing or
// empty one with a 403 HTML page). Failures below HTTP become typed, retryable errors here.

export interface TransportOptions {
  userAgent: string;
  timeoutMs: number;
  /** Sockets per origin; the shared rate limit keeps the real concurrency low anyway. */
  connections?: number;
  /** A body larger than this is abandoned (ResponseTooLargeError) instead of buffered whole. */
  maxResponseBytes: number;
}

/** The transport settings of the configuration (SVC_USER_AGENT, SVC_REQUEST_TIMEOUT, SVC_MAX_RESPONSE_SIZE). */
export function transportOptionsFrom(api: {
  userAgent: string;
  requestTimeoutMs: number;
  maxResponseBytes: number;
}): TransportOptions {
  return {
    userAgent: api.userAgent,
    timeoutMs: api.requestTimeoutMs,
    maxResponseBytes: api.maxResponseBytes,
  };
}

export interface OutgoingRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal | undefined;
  /** What errors may show of this request (no credentials). */
  summary: RequestSummary;
}

export interface HttpTransport {
  send(outgoing: OutgoingRequest): Promise<RawResponse>;
  close(): Promise<void>;
}

const TIMEOUT_CODES: Record<string, RequestTimeoutError['phase']> = {
  UND_ERR_CONNECT_TIMEOUT: 'connect',
  UND_ERR_HEADERS_TIMEOUT: 'headers',
  UND_ERR_BODY_TIMEOUT: 'body',
};

export function createHttpTransport(options: TransportOptions): HttpTransport {
  if (options.userAgent.trim() === '')
    throw new Error('a non-empty User-Agent is required by the partner API');
  const agent = new Agent({
    connect: { timeout: options.timeoutMs },
    headersTimeout: options.timeoutMs,
    bodyTimeout: options.timeoutMs,
    keepAliveTimeout: 10_000,
    connections: options.connections ?? 16,
  });

  return {
    async send(outgoing) {
      // undici's phase timeouts run on a coarse (~0.5 s) timer wheel; a whole-attempt deadline on
      // the same budget makes short timeouts exact and bounds a body that trickles in forever.
      const deadline = AbortSignal.timeout(options.timeoutMs);
      const signal = outgoing.signal ? AbortSignal.any([outgoing.signal, deadline]) : deadline;
      try {
        const response = await request(outgoing.url, {
          method: outgoing.method,
          headers: { ...outgoing.headers, 'user-agent': options.userAgent, accept: 'application/json' },
          body: outgoing.body ?? null,
          signal,
          dispatcher: agent,
          headersTimeout: options.timeoutMs,
          bodyTimeout: options.timeoutMs,
        });
        const body = await readLimited(response.body, response.headers, options.maxResponseBytes);
        if (body === null)
          throw new ResponseTooLargeError(options.maxResponseBytes, { request: outgoing.summary });
        return { status: response.statusCode, headers: response.headers, body };
      } catch (error) {
        if (error instanceof ResponseTooLargeError) throw error;
        if (deadline.aborted && !outgoing.signal?.aborted) {
          throw new RequestTimeoutError('total', { request: outgoing.summary, cause: error });
        }
        throw toTransportError(error, outgoing);
      }
    },
    async close() {
      await agent.close();
    },
  };
}

type ResponseBody = Dispatcher.ResponseData['body'];

/**
 * The body as text, or null once it passes `maxBytes` (announced by Content-Length or counted as it
 * streams in): the rest is never read and the socket is dropped, so a 200 MB answer costs at most
 * the limit in memory.
 */
async function readLimited(
  body: ResponseBody,
  headers: ResponseHeaders,
  maxBytes: number,
): Promise<string | null> {
  const announced = Number(headers['content-length']);
  if (Number.isFinite(announced) && announced > maxBytes) {
    body.destroy();
    return null;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      body.destroy();
      return null;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size).toString('utf8');
}

function toTransportError(error: unknown, outgoing: OutgoingRequest): unknown {
  // The caller's cancellation is not a failure of the partner: rethrow it untouched.
  if (outgoing.signal?.aborted) return outgoing.signal.reason ?? error;
  const code =
    typeof (error as { code?: unknown }).code === 'string' ? (error as { code: string }).code : null;
  const details = { request: outgoing.summary, cause: error };
  const phase = code === null ? undefined : TIMEOUT_CODES[code];
  if (phase !== undefined) return new RequestTimeoutError(phase, details);
  // Content-Length promised more than arrived: a truncated body, the same failure as bad JSON.
  if (code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH') return new InvalidJsonError(details);
  return new NetworkError(code, details);
}
