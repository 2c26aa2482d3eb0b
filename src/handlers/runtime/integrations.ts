import type { BotActor } from '../../domain/workspace/actors.ts';
import type { integrationOperations } from '../../contract/runtime/integrations.ts';
import type { Handlers } from '../operation.ts';

export const integrationHandlers = {
  configureIntegration: async () => ({}),
} satisfies Handlers<BotActor, typeof integrationOperations>;
