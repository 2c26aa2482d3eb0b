import type { BotActor } from '../../domain/workspace/actors.ts';
import type { searchOperations } from '../../contract/files/search.ts';
import type { Handlers } from '../operation.ts';

export const searchHandlers = {
  searchFiles: async (d, actor, query) => ({ passages: await d.fileSearch.search(actor, query) }),
} satisfies Handlers<BotActor, typeof searchOperations>;
