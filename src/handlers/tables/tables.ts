import type { BotActor } from '../../domain/workspace/actors.ts';
import type { tableOperations } from '../../contract/tables/tables.ts';
import type { Handlers } from '../operation.ts';

export const tableHandlers = {
  createTable: async (d, actor, body) => ({ table: await d.tables.create(actor, body) }),
  getTable: (d, actor, { table }) => d.tables.get(actor, table),
  getOrCreateTable: (d, actor, { table, ...body }) => d.tables.getOrCreate(actor, table, body),
  updateTable: (d, actor, { table, ...patch }) => d.tables.update(actor, table, patch),
  renameTableColumn: async (d, actor, { table, name, newName }) => ({
    table: await d.tables.renameColumn(actor, table, name, newName),
  }),
  deleteTable: async (d, actor, { table }) => {
    await d.tables.delete(actor, table);
    return {};
  },
  listTables: async (d, actor, { tags }) => ({ tables: await d.tables.list(actor, tags) }),
  duplicateTable: (d, actor, { sourceTableId, ...options }) =>
    d.tables.duplicate(actor, sourceTableId, options),
} satisfies Handlers<BotActor, typeof tableOperations>;
