import type { BotActor } from '../../domain/workspace/actors.ts';
import type { rowOperations } from '../../contract/tables/rows.ts';
import type { Handlers } from '../operation.ts';
import { ApiError } from '../../domain/shared/errors.ts';

export const rowHandlers = {
  getTableRow: async (d, actor, { table, id }) => ({ row: await d.tableRows.get(actor, table, id) }),
  findTableRows: (d, actor, { table, ...query }) => d.tableQueries.find(actor, table, query),
  createTableRows: (d, actor, { table, rows, waitComputed }) =>
    d.tableRows.create(actor, table, rows, waitComputed),
  updateTableRows: (d, actor, { table, rows, waitComputed }) =>
    d.tableRows.update(actor, table, rows, waitComputed),
  upsertTableRows: (d, actor, { table, rows, keyColumn, waitComputed }) =>
    d.tableRows.upsert(actor, table, rows, keyColumn, waitComputed),
  deleteTableRows: async (d, actor, { table, ids, filter, deleteAllRows }) => {
    const given = [ids !== undefined, filter !== undefined, deleteAllRows === true].filter(Boolean).length;
    if (given !== 1) {
      throw new ApiError('InvalidPayload', 'Give exactly one of ids, filter and deleteAllRows: true');
    }
    const deletedRows = ids
      ? await d.tableRows.deleteByIds(actor, table, ids)
      : filter
        ? await d.tableRows.deleteWhere(actor, table, filter)
        : await d.tableRows.deleteAll(actor, table);
    return { deletedRows };
  },
} satisfies Handlers<BotActor, typeof rowOperations>;
