import { Type } from 'typebox';
import type { Static } from 'typebox';
import { Timestamp } from '../shared/schemas.ts';
import { WEBHOOK_SEND_STATUSES, WEBHOOK_VERIFICATIONS } from '../../value-sets.ts';

// A bot's webhook and its subscriptions as the Admin API answers them, and what changes them: a module
// without the store, so the contract declares the Admin API with them.

export const BotWebhookSchema = Type.Object({
  id: Type.String({ description: 'The webhook id: the last part of its URL' }),
  url: Type.String({ description: 'Where senders post: `{url}` or `{url}/any/path`, any method' }),
  verification: Type.Enum(WEBHOOK_VERIFICATIONS, {
    description:
      '`standard-webhooks`: a request must be signed with the bot’s signing secret (Standard Webhooks); `none`: any request is queued, and the bot checks it',
  }),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type BotWebhook = Static<typeof BotWebhookSchema>;

export const UpdateBotWebhookBodySchema = Type.Object({
  verification: Type.Optional(BotWebhookSchema.properties.verification),
});
export type UpdateBotWebhookBody = Static<typeof UpdateBotWebhookBodySchema>;

const EventType = Type.String({ minLength: 1, maxLength: 200 });

export const WebhookSubscriptionSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  eventTypes: Type.Array(EventType),
  description: Type.String(),
  lastDelivery: Type.Optional(
    Type.Object({
      status: Type.Enum(WEBHOOK_SEND_STATUSES, {
        description: '`delivered`; `pending`: failed, and tried again later; `failed`: given up after a day',
      }),
      statusCode: Type.Optional(Type.Integer({ description: 'What the receiver answered, if it answered' })),
      error: Type.Optional(Type.String()),
      at: Timestamp,
    }),
  ),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});
export type WebhookSubscription = Static<typeof WebhookSubscriptionSchema>;

export const CreateWebhookSubscriptionBodySchema = Type.Object({
  url: Type.String({ minLength: 1, maxLength: 2000, description: 'An http or https URL' }),
  eventTypes: Type.Array(EventType, {
    minItems: 1,
    maxItems: 50,
    description: 'The bot’s event types to deliver (`message_created`, `webhook`, custom ones…); `*`: all',
  }),
  description: Type.Optional(Type.String({ maxLength: 500 })),
});
export type CreateWebhookSubscriptionBody = Static<typeof CreateWebhookSubscriptionBodySchema>;
