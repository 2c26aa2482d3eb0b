import type { BotActor } from '../../domain/workspace/actors.ts';
import type { passageOperations } from '../../contract/files/passages.ts';
import type { Handlers } from '../operation.ts';

export const passageHandlers = {
  listFilePassages: (d, actor, { id, ...query }) => d.files.listPassages(actor, id, query),
  setFilePassages: async (d, actor, { id, passages }) => {
    await d.files.setPassages(actor, id, passages);
    return {};
  },
} satisfies Handlers<BotActor, typeof passageOperations>;
