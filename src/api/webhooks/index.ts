import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { validateHeaderName, validateHeaderValue } from 'node:http';
import { Transform } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { ReachedIngress } from '../../domain/webhooks/ingress.ts';
import { bodyTooLarge } from '../../domain/webhooks/ingress.ts';
import { errorResponses } from '../../contract/models.ts';
import { pathParam } from '../channel-routes.ts';
import { unavailable } from '../errors.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import type { Security } from '../openapi-security.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The webhook of an ingress request, found before its body is read. */
    reachedWebhook?: ReachedIngress;
  }
}

const tags = ['Webhooks'];
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

const WEBHOOK_SECURITY: Security = [{ webhookSignature: [] }, {}];

const Receipt = Type.Object({
  eventId: Type.String({ description: 'The `webhook` event the request was queued as' }),
  duplicate: Type.Boolean({
    description: 'true: a delivery of the same id was taken before; nothing new was queued',
  }),
});

/** Headers of a handler's answer that describe the answer itself; how it travels is this server's to say. */
const HOP_HEADERS = new Set(['connection', 'content-length', 'transfer-encoding', 'keep-alive', 'upgrade']);

/** The headers of a handler's answer that may be relayed: the integration's code wrote them, so each is checked. */
function relayedHeaders(headers: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(headers).filter(([name, value]) => {
      if (HOP_HEADERS.has(name.toLowerCase())) return false;
      try {
        validateHeaderName(name);
        validateHeaderValue(name, value);
        return true;
      } catch {
        return false;
      }
    }),
  );
}

/** What follows `/webhooks/{id}` in the request's URL, and its query string. */
function pathAndQuery(request: FastifyRequest, webhookId: string): { path: string; query: string } {
  const url = request.raw.url ?? '';
  const mark = url.indexOf('?');
  const pathname = mark === -1 ? url : url.slice(0, mark);
  const start = pathname.indexOf(webhookId) + webhookId.length;
  return { path: pathname.slice(start) || '/', query: mark === -1 ? '' : url.slice(mark + 1) };
}

/**
 * The webhook ingress, under `/webhooks/{webhookId}`: any method, any path below, any body (kept as
 * its bytes, for signatures). A request is verified and queued as the bot's `webhook` event; 202
 * says it is stored.
 */
export const webhookIngressApi: FastifyPluginAsyncTypebox = async (app) => {
  const { webhookIngress } = app.domain;
  // What a queued event may carry; an integration's handler takes up to the route's own limit.
  const maxEventBody = PAYLOAD_LIMITS.runtime;
  app.decorateRequest('reachedWebhook', undefined);
  // The webhook is found, and the body's size checked, before the body is read: an unknown webhook or
  // a body its receiver cannot take costs no memory. Found first of all, so that the rate limits count
  // requests to it as its own once it is known.
  app.addHook('onRequest', async (request) => {
    request.reachedWebhook = await webhookIngress.reach(pathParam(request, 'webhookId'));
  });
  app.addHook('preParsing', async (request, _reply, payload) => {
    const reached = request.reachedWebhook ?? unavailable('the webhook');
    if (reached.kind === 'integration') return payload;
    const maxBody = maxEventBody;
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBody) throw bodyTooLarge(maxBody, declared);
    let seen = 0;
    const metered = new Transform({
      transform(chunk: Buffer, _encoding, next) {
        seen += chunk.length;
        next(seen > maxBody ? bodyTooLarge(maxBody) : null, chunk);
      },
    });
    // A body cut off (its client left, or it came too slowly) fails its reading instead of leaving it
    // waiting; a body too large fails it alone, so that the connection stays to carry the 413.
    payload.once('error', (err) => metered.destroy(err));
    return payload.pipe(metered);
  });
  // Bodies stay bytes: a signature is over them as sent, whatever their type says.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const schema = {
    operationId: 'receiveWebhook',
    summary: 'Queue a request as the `webhook` event of the bot the webhook belongs to',
    tags,
    params: Type.Object({ webhookId: Type.String() }),
    security: WEBHOOK_SECURITY,
    response: { 200: Receipt, 202: Receipt, ...errorResponses },
  };
  for (const url of ['', '/*']) {
    app.route({
      method: METHODS,
      url,
      bodyLimit: PAYLOAD_LIMITS.webhook,
      schema: url === '' ? schema : { ...schema, operationId: 'receiveWebhookPath' },
      handler: async (request, reply) => {
        const webhookId = pathParam(request, 'webhookId');
        const reached = request.reachedWebhook ?? unavailable('the webhook');
        const received = {
          method: request.method,
          ...pathAndQuery(request, webhookId),
          headers: request.headers,
          body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        };
        if (reached.kind === 'integration') {
          // The integration's answer goes back as it gave it, past the route's answer schema.
          const answer = await webhookIngress.forward(reached.installation, received);
          reply.hijack();
          reply.raw.writeHead(answer.status, relayedHeaders(answer.headers));
          reply.raw.end(answer.body);
          return reply;
        }
        const receipt = await webhookIngress.receive(reached.webhook, received, maxEventBody);
        return reply.status(receipt.duplicate ? 200 : 202).send(receipt);
      },
    });
  }
};
