import { Type } from 'typebox';
import { IdParam } from '../schemas.ts';
import { BotWebhookSchema, UpdateBotWebhookBodySchema } from '../../domain/webhooks/schemas.ts';
import { operation } from '../operation.ts';

const tag = 'Bot webhooks';
const WebhookAnswer = Type.Object({ webhook: BotWebhookSchema });

/** A bot's webhook ingress, and the signing secret the requests to it are verified with. */
export const botWebhookOperations = [
  operation({
    id: 'getBotWebhook',
    method: 'GET',
    path: '/bots/:id/webhook',
    access: 'read',
    tag,
    summary: 'Get the URL of a bot’s webhook ingress and how its requests are verified',
    params: IdParam,
    response: WebhookAnswer,
  }),
  operation({
    id: 'updateBotWebhook',
    method: 'PUT',
    path: '/bots/:id/webhook',
    access: 'write',
    tag,
    summary: 'Change how a bot’s webhook ingress verifies requests',
    params: IdParam,
    body: UpdateBotWebhookBodySchema.properties,
    response: WebhookAnswer,
  }),
  operation({
    id: 'rotateBotSigningSecrets',
    method: 'POST',
    path: '/bots/:id/signing-secrets/rotate',
    access: 'write',
    tag,
    summary: 'Replace a bot’s signing secret (its webhooks are verified with the new one at once)',
    params: IdParam,
    response: Type.Object({ newSigningSecret: Type.String() }),
  }),
] as const;
