import type { BotActor } from '../../domain/workspace/actors.ts';
import type { tagOperations } from '../../contract/runtime/tags.ts';
import type { Handlers } from '../operation.ts';

export const tagHandlers = {
  listTagValues: (d, actor, { key, ...query }) => d.tagValues.list(actor, key, query),
} satisfies Handlers<BotActor, typeof tagOperations>;
