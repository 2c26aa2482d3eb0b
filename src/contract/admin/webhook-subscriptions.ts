import { Type } from 'typebox';
import { EmptySchema, IdParam } from '../schemas.ts';
import { Model } from '../models.ts';
import { CreateWebhookSubscriptionBodySchema } from '../../domain/webhooks/schemas.ts';
import { operation } from '../operation.ts';

const tag = 'Webhook subscriptions';

/** The URLs a bot's events are posted to. */
export const webhookSubscriptionOperations = [
  operation({
    id: 'listWebhookSubscriptions',
    method: 'GET',
    path: '/bots/:id/webhook-subscriptions',
    access: 'read',
    tag,
    summary: 'List the URLs a bot’s events are posted to, with how each one’s last delivery went',
    params: IdParam,
    response: Type.Object({ subscriptions: Type.Array(Model.WebhookSubscription) }),
  }),
  operation({
    id: 'createWebhookSubscription',
    method: 'POST',
    path: '/bots/:id/webhook-subscriptions',
    access: 'write',
    tag,
    summary: 'Post a bot’s events of some types to a URL (the secret that signs them is shown once)',
    description:
      'Each delivery is a POST of `{ type, botId, event }`, signed in the Standard Webhooks format with the secret answered here, and tried again with a growing wait for a day until the URL answers 2xx.',
    params: IdParam,
    body: CreateWebhookSubscriptionBodySchema.properties,
    response: Type.Object({ subscription: Model.WebhookSubscription, secret: Type.String() }),
  }),
  operation({
    id: 'deleteWebhookSubscription',
    method: 'DELETE',
    path: '/bots/:id/webhook-subscriptions/:subscriptionId',
    access: 'write',
    tag,
    summary: 'Stop posting a bot’s events to a URL (deliveries not made yet are dropped)',
    params: { ...IdParam, subscriptionId: Type.String() },
    response: EmptySchema,
  }),
] as const;
