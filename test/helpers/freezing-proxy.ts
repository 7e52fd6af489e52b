import { connect, createServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

export interface FreezingProxy {
  port: number;
  /**
   * From now on, connections whose client sent `marker` (a CLIENT SETNAME, say) go dead: nothing
   * more is forwarded either way, and the sockets stay open. A half-open connection, as a client
   * sees one to a server that vanished without a reset.
   */
  freeze(marker: string): void;
  /** How many connections are frozen now. */
  frozen(): number;
  close(): Promise<void>;
}

/** A TCP proxy to `target` on a free loopback port. */
export async function startFreezingProxy(target: { host: string; port: number }): Promise<FreezingProxy> {
  const sockets = new Set<Socket>();
  const markers: string[] = [];
  let frozenCount = 0;
  const server = createServer((client) => {
    const upstream = connect(target.port, target.host);
    sockets.add(client).add(upstream);
    let seen = '';
    let held = false;
    const hold = () => {
      if (!held && markers.some((marker) => seen.includes(marker))) {
        held = true;
        frozenCount++;
      }
      return held;
    };
    client.on('data', (chunk: Buffer) => {
      if (seen.length < 8_192) seen += chunk.toString('latin1');
      if (!hold()) upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (!hold()) client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
      if (held) frozenCount--;
      held = false;
    };
    // A frozen connection never closes on its own: that is the point.
    client.on('close', end).on('error', end);
    upstream.on('close', () => !held && end()).on('error', () => !held && end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    freeze: (marker) => void markers.push(marker),
    frozen: () => frozenCount,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
