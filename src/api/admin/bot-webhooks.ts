import { Type } from 'typebox';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { BotWebhookSchema, UpdateBotWebhookBodySchema } from '../../domain/webhooks/bot-webhooks.ts';
import {
  CreateWebhookSubscriptionBodySchema,
  WebhookSubscriptionSchema,
} from '../../domain/webhooks/subscriptions.ts';
import { workspaceActorOf } from '../auth.ts';
import { EmptySchema, errorResponses, IdParams } from '../../contract/schemas.ts';

const tags = ['Bot webhooks'];
const WebhookResponse = Type.Object({ webhook: BotWebhookSchema });

const subscriptionTags = ['Webhook subscriptions'];

/**
 * A bot's webhooks: its ingress and the signing secret requests to it are verified with, and the
 * URLs its events are posted to (subscriptions).
 */
export const botWebhookRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { bots, botWebhooks, webhookSubscriptions } = app.domain;

  app.get(
    '/bots/:id/webhook-subscriptions',
    {
      schema: {
        operationId: 'listWebhookSubscriptions',
        summary: 'List the URLs a bot’s events are posted to, with how each one’s last delivery went',
        tags: subscriptionTags,
        params: IdParams,
        response: {
          200: Type.Object({ subscriptions: Type.Array(WebhookSubscriptionSchema) }),
          ...errorResponses,
        },
      },
    },
    async (request) => ({
      subscriptions: await webhookSubscriptions.list(workspaceActorOf(request), request.params.id),
    }),
  );

  app.post(
    '/bots/:id/webhook-subscriptions',
    {
      schema: {
        operationId: 'createWebhookSubscription',
        summary: 'Post a bot’s events of some types to a URL (the secret that signs them is shown once)',
        description:
          'Each delivery is a POST of `{ type, botId, event }`, signed in the Standard Webhooks format with the secret answered here, and tried again with a growing wait for a day until the URL answers 2xx.',
        tags: subscriptionTags,
        params: IdParams,
        body: CreateWebhookSubscriptionBodySchema,
        response: {
          200: Type.Object({ subscription: WebhookSubscriptionSchema, secret: Type.String() }),
          ...errorResponses,
        },
      },
    },
    async (request) =>
      webhookSubscriptions.create(workspaceActorOf(request), request.params.id, request.body),
  );

  app.delete(
    '/bots/:id/webhook-subscriptions/:subscriptionId',
    {
      schema: {
        operationId: 'deleteWebhookSubscription',
        summary: 'Stop posting a bot’s events to a URL (deliveries not made yet are dropped)',
        tags: subscriptionTags,
        params: Type.Object({ id: Type.String(), subscriptionId: Type.String() }),
        response: { 200: EmptySchema, ...errorResponses },
      },
    },
    async (request) => {
      await webhookSubscriptions.delete(
        workspaceActorOf(request),
        request.params.id,
        request.params.subscriptionId,
      );
      return {};
    },
  );

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
