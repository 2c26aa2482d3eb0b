import type { BotActor } from '../../domain/workspace/actors.ts';
import type { stateOperations } from '../../contract/runtime/states.ts';
import type { Handlers } from '../operation.ts';

export const stateHandlers = {
  getState: async (d, actor, key) => ({ state: await d.states.get(actor, key), meta: { cached: false } }),
  setState: async (d, actor, { payload, expiry, ...key }) => ({
    state: await d.states.set(actor, key, payload, expiry),
  }),
  getOrSetState: async (d, actor, { payload, expiry, ...key }) => {
    const { state, cached } = await d.states.getOrSet(actor, key, payload, expiry);
    return { state, meta: { cached } };
  },
  patchState: async (d, actor, { payload, expiry, ...key }) => ({
    state: await d.states.patch(actor, key, payload, expiry),
  }),
  setStateExpiry: async (d, actor, { expiry, ...key }) => ({
    state: await d.states.setExpiry(actor, key, expiry),
  }),
} satisfies Handlers<BotActor, typeof stateOperations>;
