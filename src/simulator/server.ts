import { once } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { SimResponse } from './http-types.js';
import type { HandledResponse, IncomingSimRequest } from './request-handler.js';
import { jsonResponse } from './responses.js';

const MAX_BODY_BYTES = 1_000_000;

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of request as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new RangeError('request body too large');
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

function write(response: ServerResponse, answer: SimResponse): void {
  const body = Buffer.from(answer.body, 'utf8');
  response.writeHead(answer.status, { ...answer.headers, 'content-length': String(body.length) });
  response.end(body);
}

const PADDING = Buffer.alloc(64 * 1024, 0x20);

/**
 * The oversize fault: the answer followed by `padBytes` of whitespace (still valid JSON), chunked
 * with no Content-Length so only counting can stop it. Stops when the client hangs up.
 */
async function writePadded(response: ServerResponse, answer: SimResponse, padBytes: number): Promise<void> {
  response.writeHead(answer.status, answer.headers);
  response.write(answer.body);
  const closed = once(response, 'close').then(() => false);
  for (let sent = 0; sent < padBytes && !response.destroyed; sent += PADDING.length) {
    if (!response.write(PADDING) && !(await Promise.race([once(response, 'drain').then(() => true), closed])))
      return;
  }
  response.end();
}

/** The simulator over HTTP: a thin shell that reads the request and writes what the handler answers. */
export function createSimulatorServer(
  handle: (request: IncomingSimRequest) => Promise<HandledResponse>,
): Server {
  const serve = async (incoming: IncomingMessage, outgoing: ServerResponse): Promise<void> => {
    const answer = await handle({
      method: incoming.method ?? 'GET',
      url: incoming.url ?? '/',
      headers: incoming.headers,
      body: await readBody(incoming),
      remoteAddress: incoming.socket.remoteAddress ?? '',
    });
    if (answer.padBytes > 0) await writePadded(outgoing, answer, answer.padBytes);
    else write(outgoing, answer);
  };

  return createServer((incoming, outgoing) => {
    serve(incoming, outgoing).catch((error: unknown) => {
      const message = error instanceof RangeError ? error.message : 'internal simulator error';
      if (!outgoing.headersSent) write(outgoing, jsonResponse(500, { error: message }));
      else outgoing.destroy();
    });
  });
}
