import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BotWebhookSchema, UpdateBotWebhookBodySchema } from '../../domain/webhooks/bot-webhooks.ts';
import { workspaceActorOf } from '../auth.ts';
import { errorResponses, IdParams } from '../../contract/schemas.ts';

const tags = ['Bot webhooks'];
const WebhookResponse = Type.Object({ webhook: BotWebhookSchema });

/** A bot's webhook ingress and the signing secret its requests are verified with. */
export const botWebhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { bots, botWebhooks } = app.domain;

  app.get(
    '/bots/:id/webhook',
    {
      schema: {
        operationId: 'getBotWebhook',
        summary: 'Get the URL of a bot’s webhook ingress and how its requests are verified',
        tags,
        params: IdParams,
        response: { 200: WebhookResponse, ...errorResponses },
      },
    },
    async (request) => ({ webhook: await botWebhooks.get(workspaceActorOf(request), request.params.id) }),
  );

  app.put(
    '/bots/:id/webhook',
    {
      schema: {
        operationId: 'updateBotWebhook',
        summary: 'Change how a bot’s webhook ingress verifies requests',
        tags,
        params: IdParams,
        body: UpdateBotWebhookBodySchema,
        response: { 200: WebhookResponse, ...errorResponses },
      },
    },
    async (request) => ({
      webhook: await botWebhooks.update(workspaceActorOf(request), request.params.id, request.body),
    }),
  );

  app.post(
    '/bots/:id/signing-secrets/rotate',
    {
      schema: {
        operationId: 'rotateBotSigningSecrets',
        summary: 'Replace a bot’s signing secret (its webhooks are verified with the new one at once)',
        tags,
        params: IdParams,
        response: { 200: Type.Object({ newSigningSecret: Type.String() }), ...errorResponses },
      },
    },
    async (request) => ({
      newSigningSecret: await bots.rotateSigningSecret(workspaceActorOf(request), request.params.id),
    }),
  );
};
