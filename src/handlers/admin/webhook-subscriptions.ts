import type { WorkspaceActor } from '../../domain/workspace/actors.ts';
import type { webhookSubscriptionOperations } from '../../contract/admin/webhook-subscriptions.ts';
import type { Handlers } from '../operation.ts';

export const webhookSubscriptionHandlers = {
  listWebhookSubscriptions: async (d, actor, { id }) => ({
    subscriptions: await d.webhookSubscriptions.list(actor, id),
  }),
  createWebhookSubscription: (d, actor, { id, ...body }) => d.webhookSubscriptions.create(actor, id, body),
  deleteWebhookSubscription: async (d, actor, { id, subscriptionId }) => {
    await d.webhookSubscriptions.delete(actor, id, subscriptionId);
    return {};
  },
} satisfies Handlers<WorkspaceActor, typeof webhookSubscriptionOperations>;
