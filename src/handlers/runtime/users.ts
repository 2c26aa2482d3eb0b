import type { BotActor } from '../../domain/workspace/actors.ts';
import type { userOperations } from '../../contract/runtime/users.ts';
import type { Handlers } from '../operation.ts';

export const userHandlers = {
  createUser: async (d, actor, body) => ({
    user: (await d.proactive.user(actor, body, 'new'))?.user ?? (await d.users.create(actor, body)),
  }),
  getUser: async (d, actor, { id }) => ({ user: await d.users.get(actor, id) }),
  listUsers: (d, actor, query) => d.users.list(actor, query),
  getOrCreateUser: async (d, actor, body) => {
    const { user, created } =
      (await d.proactive.user(actor, body, 'reuse')) ?? (await d.users.getOrCreate(actor, body));
    return { user, meta: { created } };
  },
  updateUser: async (d, actor, { id, ...body }) => ({ user: await d.users.update(actor, id, body) }),
  deleteUser: async (d, actor, { id }) => {
    await d.users.delete(actor, id);
    return {};
  },
} satisfies Handlers<BotActor, typeof userOperations>;
