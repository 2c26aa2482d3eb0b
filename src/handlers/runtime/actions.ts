import type { BotActor } from '../../domain/workspace/actors.ts';
import type { actionOperations } from '../../contract/runtime/actions.ts';
import type { Handlers } from '../operation.ts';

export const actionHandlers = {
  callAction: async (d, actor, { type, input }) => {
    const { output, cached } = await d.actions.call(actor, type, input);
    return { output, meta: { cached } };
  },
} satisfies Handlers<BotActor, typeof actionOperations>;
