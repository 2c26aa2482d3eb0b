import type { BotActor } from '../../domain/workspace/actors.ts';
import type { fileTagOperations } from '../../contract/files/tags.ts';
import type { Handlers } from '../operation.ts';

export const fileTagHandlers = {
  listFileTags: (d, actor, page) => d.files.listTags(actor, page),
  listFileTagValues: (d, actor, { tag: key, ...page }) => d.files.listTagValues(actor, key, page),
} satisfies Handlers<BotActor, typeof fileTagOperations>;
