import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Transform } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { ReachedWebhook } from '../../domain/webhooks/bot-webhooks.ts';
import { bodyTooLarge } from '../../domain/webhooks/ingress.ts';
import { errorResponses } from '../../contract/schemas.ts';
import { pathParam, unavailable } from '../channel-routes.ts';
import { PAYLOAD_LIMITS } from '../limits.ts';
import type { Security } from '../openapi-security.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The webhook of an ingress request, found before its body is read. */
    reachedWebhook?: ReachedWebhook;
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
  // What a queued event may carry: the route's own limit is the ceiling of what any receiver takes.
  const maxBody = PAYLOAD_LIMITS.runtime;
  app.decorateRequest('reachedWebhook', undefined);
  // The webhook is found, and the body's size checked, before the body is read: an unknown webhook or
  // a body its receiver cannot take costs no memory.
  app.addHook('preParsing', async (request, _reply, payload) => {
    request.reachedWebhook = await webhookIngress.reach(pathParam(request, 'webhookId'));
    const declared = Number(request.headers['content-length']);
    if (Number.isFinite(declared) && declared > maxBody) throw bodyTooLarge(maxBody, declared);
    let seen = 0;
    return payload.pipe(
      new Transform({
        transform(chunk: Buffer, _encoding, next) {
          seen += chunk.length;
          next(seen > maxBody ? bodyTooLarge(maxBody) : null, chunk);
        },
      }),
    );
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
      schema: url === '' ? schema : { ...schema, operationId: 'receiveWebhookPath', hide: true },
      handler: async (request, reply) => {
        const webhookId = pathParam(request, 'webhookId');
        const receipt = await webhookIngress.receive(
          request.reachedWebhook ?? unavailable('the webhook'),
          {
            method: request.method,
            ...pathAndQuery(request, webhookId),
            headers: request.headers,
            body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
          },
          maxBody,
        );
        return reply.status(receipt.duplicate ? 200 : 202).send(receipt);
      },
    });
  }
};
