import { Type } from 'typebox';
import {
  FindBody,
  FoundAnswer,
  NewRows,
  RowId,
  RowSchema,
  RowUpdates,
  UpsertAnswer,
  WriteAnswer,
} from '../../domain/tables/schemas.ts';
import { MAX_ROWS_PER_CALL } from '../../domain/tables/rows.ts';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { ApiError } from '../../domain/shared/errors.ts';
import { operation } from './define.ts';
import { TableRef } from './tables.ts';

const tag = 'Table rows';
const waitComputed = Type.Optional(
  Type.Boolean({
    description: 'Answer once the columns code computes are up to date (computed in the call)',
  }),
);

export const rowOperations = [
  operation({
    id: 'getTableRow',
    method: 'GET',
    path: '/tables/:table/row',
    access: 'read',
    tag,
    summary: 'Get a row by id',
    params: TableRef,
    query: { id: RowId },
    response: Type.Object({ row: RowSchema }),
    handler: async (d, actor, { table, id }) => ({ row: await d.tableRows.get(actor, table, id) }),
  }),
  operation({
    id: 'findTableRows',
    method: 'POST',
    path: '/tables/:table/rows/find',
    access: 'read',
    tag,
    summary: 'Find rows: filter, order, select, group, page',
    description:
      'The filter language is MongoDB-like (`$eq $ne $gt $gte $lt $lte $in $nin $exists $mod $size $regex $and $or $not`); docs/tables.md gives its exact meaning.',
    params: TableRef,
    body: FindBody,
    response: FoundAnswer,
    handler: (d, actor, { table, ...query }) => d.tableQueries.find(actor, table, query),
  }),
  operation({
    id: 'createTableRows',
    method: 'POST',
    path: '/tables/:table/rows',
    access: 'write',
    tag,
    summary: 'Insert rows',
    description:
      'Rows of the wrong shape are reported in `errors` and the others written; keys that are no column are ignored and named in `warnings`.',
    params: TableRef,
    body: { rows: NewRows, waitComputed },
    response: WriteAnswer,
    handler: (d, actor, { table, rows, waitComputed }) =>
      d.tableRows.create(actor, table, rows, waitComputed),
  }),
  operation({
    id: 'updateTableRows',
    method: 'PUT',
    path: '/tables/:table/rows',
    access: 'write',
    tag,
    summary: 'Update rows by id (the columns given change)',
    params: TableRef,
    body: { rows: RowUpdates, waitComputed },
    response: WriteAnswer,
    handler: (d, actor, { table, rows, waitComputed }) =>
      d.tableRows.update(actor, table, rows, waitComputed),
  }),
  operation({
    id: 'upsertTableRows',
    method: 'POST',
    path: '/tables/:table/rows/upsert',
    access: 'write',
    tag,
    summary: 'Update the rows whose key matches, insert the others',
    params: TableRef,
    body: {
      rows: Type.Array(JsonObject, { minItems: 1, maxItems: MAX_ROWS_PER_CALL }),
      keyColumn: Type.Optional(Type.String({ minLength: 1, maxLength: 30, default: 'id' })),
      waitComputed,
    },
    response: UpsertAnswer,
    handler: (d, actor, { table, rows, keyColumn, waitComputed }) =>
      d.tableRows.upsert(actor, table, rows, keyColumn, waitComputed),
  }),
  operation({
    id: 'deleteTableRows',
    method: 'POST',
    path: '/tables/:table/rows/delete',
    access: 'write',
    tag,
    summary: 'Delete rows by ids, by filter, or all of them',
    description: 'Give exactly one of `ids`, `filter` and `deleteAllRows: true`.',
    params: TableRef,
    body: {
      ids: Type.Optional(Type.Array(RowId, { maxItems: MAX_ROWS_PER_CALL })),
      filter: Type.Optional(JsonObject),
      deleteAllRows: Type.Optional(Type.Boolean()),
    },
    response: Type.Object({ deletedRows: Type.Integer() }),
    handler: async (d, actor, { table, ids, filter, deleteAllRows }) => {
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
  }),
];
