import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postAlert } from '../../../src/alerts/webhook-sender.js';
import { ResponseTooLargeError } from '../../../src/api/errors.js';
import { createHttpTransport } from '../../../src/api/http-transport.js';

// Response size limits, over real HTTP: a server that would send 200 MB must cost the client no
// more than its limit. The server counts what it managed to write before the client hung up.

const MB = 1024 * 1024;
const HUGE = 200 * MB;
const CHUNK = Buffer.alloc(64 * 1024, 0x20); // spaces: still valid JSON after the opening value

interface Sent {
  bytes: number;
  finished: boolean;
}

let server: Server;
let base: string;
const sent = new Map<string, Sent>();

/** Streams `{"data":[]}` followed by HUGE bytes of whitespace, honouring backpressure. */
async function streamHuge(response: ServerResponse, record: Sent, withLength: boolean): Promise<void> {
  const head = Buffer.from('{"data":[]}');
  response.writeHead(200, {
    'content-type': 'application/json',
    ...(withLength ? { 'content-length': String(head.length + HUGE) } : {}),
  });
  response.write(head);
  record.bytes = head.length;
  const closed = once(response, 'close').then(() => false);
  while (record.bytes < HUGE + head.length && !response.destroyed) {
    record.bytes += CHUNK.length;
    if (!response.write(CHUNK)) {
      const drained = once(response, 'drain').then(() => true);
      if (!(await Promise.race([drained, closed]))) return;
    }
  }
  record.finished = !response.destroyed;
  response.end();
}

beforeAll(async () => {
  server = createServer((request, response) => {
    const name = new URL(request.url ?? '/', 'http://x').searchParams.get('name') ?? '';
    const record: Sent = { bytes: 0, finished: false };
    sent.set(name, record);
    request.resume();
    if (request.url?.startsWith('/small')) {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
      return;
    }
    void streamHuge(response, record, request.url?.startsWith('/announced') === true).catch(() => {
      response.destroy();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const summary = (url: URL) => ({ method: 'GET', url: url.toString(), params: {} });

describe('SVC_MAX_RESPONSE_SIZE: the partner API transport', () => {
  const transport = createHttpTransport({ userAgent: 'test', timeoutMs: 30_000, maxResponseBytes: MB });
  afterAll(() => transport.close());

  it('a streamed (chunked) body past the limit fails with ResponseTooLargeError after reading about the limit', async () => {
    const url = new URL(`${base}/chunked?name=chunked`);
    const before = process.memoryUsage().rss;
    const error = await transport
      .send({ method: 'GET', url, headers: {}, summary: summary(url) })
      .catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(ResponseTooLargeError);
    expect((error as ResponseTooLargeError).retryable).toBe(false);
    expect((error as Error).message).toMatch(/larger than 1MB \(SVC_MAX_RESPONSE_SIZE\)/);
    await waitFor(() => sent.get('chunked') !== undefined);
    // Socket buffers on both sides hold a few MB at most; the 200 MB were never sent, let alone kept.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sent.get('chunked')!.finished).toBe(false);
    expect(sent.get('chunked')!.bytes).toBeLessThan(32 * MB);
    expect(process.memoryUsage().rss - before).toBeLessThan(100 * MB);
  });

  it('a Content-Length above the limit fails before the body is read', async () => {
    const url = new URL(`${base}/announced?name=announced`);
    await expect(transport.send({ method: 'GET', url, headers: {}, summary: summary(url) })).rejects.toThrow(
      ResponseTooLargeError,
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sent.get('announced')!.finished).toBe(false);
    expect(sent.get('announced')!.bytes).toBeLessThan(32 * MB);
  });

  it('a body under the limit is read whole, and the connection is reusable after an abandoned one', async () => {
    const url = new URL(`${base}/small?name=small`);
    const response = await transport.send({ method: 'GET', url, headers: {}, summary: summary(url) });
    expect(response).toMatchObject({ status: 200, body: '{"ok":true}' });
  });
});

describe('ALERT_WEBHOOK_MAX_REPLY_SIZE: the alert webhook sender', () => {
  it('a receiver answering 2xx with 200 MB is a delivery, and only about the cap is read', async () => {
    const result = await postAlert({
      url: `${base}/reply?name=reply`,
      rawBody: '{}',
      headers: { 'content-type': 'application/json' },
      timeoutMs: 30_000,
      maxReplyBytes: 64 * 1024,
    });
    expect(result).toEqual({ ok: true, status: 200 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(sent.get('reply')!.finished).toBe(false);
    expect(sent.get('reply')!.bytes).toBeLessThan(32 * MB);
  });
});

async function waitFor(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !condition(); i++) await new Promise((resolve) => setTimeout(resolve, 20));
}
