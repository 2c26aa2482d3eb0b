import type { BotActor } from '../../domain/workspace/actors.ts';
import type { searchOperations } from '../../contract/files/search.ts';
import type { Handlers } from '../operation.ts';

export const searchHandlers = {
  searchFiles: (d, actor, query) => d.fileSearch.search(actor, query),
} satisfies Handlers<BotActor, typeof searchOperations>;
