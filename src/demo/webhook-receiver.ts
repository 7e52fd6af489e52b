import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifyRewardsSignature } from '../alerts/verify-signature.js';

export interface ReceivedAlert {
  id: string;
  type: string;
  paymentIntentId: string;
  signatureOk: boolean;
  receivedAt: Date;
}

/** A partner's webhook endpoint, in-process: verifies each signature and dedupes on the event id. */
export async function startWebhookReceiver(
  secret: string,
): Promise<{ url: string; received: ReceivedAlert[]; close(): Promise<void> }> {
  const received: ReceivedAlert[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const rawBody = Buffer.concat(chunks);
      const verdict = verifyRewardsSignature({
        rawBody,
        header: request.headers['rewards-signature'],
        secret,
      });
      const body = JSON.parse(rawBody.toString('utf8')) as {
        id: string;
        type: string;
        data: { payment_intent: { id: string } };
      };
      if (!received.some((alert) => alert.id === body.id)) {
        received.push({
          id: body.id,
          type: body.type,
          paymentIntentId: body.data.payment_intent.id,
          signatureOk: verdict.ok,
          receivedAt: new Date(),
        });
      }
      response.writeHead(verdict.ok ? 204 : 401).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/rewards-webhook`,
    received,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
