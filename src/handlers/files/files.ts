import type { BotActor } from '../../domain/workspace/actors.ts';
import type { fileOperations } from '../../contract/files/files.ts';
import type { Handlers } from '../operation.ts';
import { HEADERS } from '../../contract/headers.ts';

export const fileHandlers = {
  upsertFile: async (d, actor, body) => ({ file: await d.files.upsert(actor, body) }),
  getFile: async (d, actor, { id }) => ({ file: await d.files.get(actor, id) }),
  listFiles: (d, actor, query) => d.files.list(actor, query),
  updateFileMetadata: async (d, actor, { id, ...body }) => ({
    file: await d.files.updateMetadata(actor, id, body),
  }),
  deleteFile: async (d, actor, { id }) => {
    await d.files.delete(actor, id);
    return {};
  },
  copyFile: async (d, actor, input) => ({
    file: await d.files.copy(actor, input.idOrKey, input.destinationKey, {
      ...(input.overwrite !== undefined && { overwrite: input.overwrite }),
      ...(input[HEADERS.destinationBotId] !== undefined && {
        destinationBotId: input[HEADERS.destinationBotId],
      }),
    }),
  }),
} satisfies Handlers<BotActor, typeof fileOperations>;
