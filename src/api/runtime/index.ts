import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { PAYLOAD_LIMITS } from '../limits.ts';
import { actionRoutes } from './actions.ts';
import { conversationRoutes } from './conversations.ts';
import { eventRoutes } from './events.ts';
import { messageRoutes } from './messages.ts';
import { miscRoutes } from './misc.ts';
import { stateRoutes } from './states.ts';
import { userRoutes } from './users.ts';
import { workflowRoutes } from './workflows.ts';

/** The Runtime API, under `/v1/chat`: what bot code and integrations call, as one bot (`x-bot-id`). */
export const runtimeApi: FastifyPluginAsyncTypebox = async (app) => {
  app.addHook('onRoute', (route) => {
    route.bodyLimit ??= PAYLOAD_LIMITS.runtime;
  });
  await app.register(actionRoutes);
  await app.register(conversationRoutes);
  await app.register(userRoutes);
  await app.register(messageRoutes);
  await app.register(eventRoutes);
  await app.register(stateRoutes);
  await app.register(workflowRoutes);
  await app.register(miscRoutes);
};
