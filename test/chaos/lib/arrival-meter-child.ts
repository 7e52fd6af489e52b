import { createServer, request } from 'node:http';
import type { AddressInfo } from 'node:net';

// A pass-through HTTP proxy in a process of its own (argv[2]: the target origin, e.g.
// http://127.0.0.1:8787). It stamps each request when it arrives and prints `arrival <ms> <path>`
// on stdout. Its event loop does nothing else, so a stamp is when the request was sent, not when a
// busy test process found time to look at it.

const target = new URL(process.argv[2] ?? '');

const server = createServer((incoming, outgoing) => {
  process.stdout.write(`arrival ${Date.now()} ${incoming.url ?? ''}\n`);
  const forward = request(
    {
      host: target.hostname,
      port: target.port,
      method: incoming.method,
      path: incoming.url,
      headers: incoming.headers,
    },
    (answer) => {
      outgoing.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(outgoing);
    },
  );
  forward.on('error', () => {
    if (!outgoing.headersSent) outgoing.writeHead(502);
    outgoing.end();
  });
  incoming.pipe(forward);
});

server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`listening ${(server.address() as AddressInfo).port}\n`);
});
process.on('SIGTERM', () => {
  server.closeAllConnections();
  server.close(() => process.exit(0));
});
