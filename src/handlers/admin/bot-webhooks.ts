import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { botWebhookOperations } from '../../contract/admin/bot-webhooks.ts';
import type { Handlers } from '../operation.ts';

export const botWebhookHandlers = {
  getBotWebhook: async (d, actor, { id }) => ({ webhook: await d.botWebhooks.get(actor, id) }),
  updateBotWebhook: async (d, actor, { id, ...body }) => ({
    webhook: await d.botWebhooks.update(actor, id, body),
  }),
  rotateBotSigningSecrets: async (d, actor, { id }) => ({
    newSigningSecret: await d.bots.rotateSigningSecret(actor, id),
  }),
} satisfies Handlers<WorkspaceActor, typeof botWebhookOperations>;
