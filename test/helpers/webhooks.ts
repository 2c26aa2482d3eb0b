import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestServer } from './server.ts';

export interface Answer {
  status: number;
  body: Record<string, unknown>;
}

/** A call of the owner's to an Admin API route the official client does not have (Parley's own). */
export async function adminCall(
  t: TestServer,
  method: string,
  path: string,
  body?: unknown,
): Promise<Answer> {
  const response = await fetch(`${t.url}/v1/admin${path}`, {
    method,
    headers: {
      authorization: `Bearer ${t.token}`,
      'x-workspace-id': t.workspaceId,
      ...(body !== undefined && { 'content-type': 'application/json' }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
}

/** An HTTP server that records what is posted to it and answers `status` (changeable). */
export interface WebhookReceiver {
  url: string;
  received: ReceivedRequest[];
  status: number;
  close(): Promise<void>;
}

export async function startReceiver(status = 200): Promise<WebhookReceiver> {
  const receiver: WebhookReceiver = {
    url: '',
    received: [],
    status,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      receiver.received.push({
        path: request.url ?? '',
        headers: request.headers,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      response.writeHead(receiver.status, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}
