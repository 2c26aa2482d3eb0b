import { Type } from 'typebox';
import {
  FindBody,
  FoundAnswer,
  NewRows,
  RowId,
  RowUpdates,
  UpsertAnswer,
  WriteAnswer,
} from '../../domain/tables/schemas.ts';
import { JsonObject } from '../../domain/shared/schemas.ts';
import { TableRef } from './tables.ts';
import { Model } from '../models.ts';
import { MAX_COLUMN_NAME, MAX_ROWS_PER_CALL } from '../../domain/tables/limits.ts';
import { operation } from '../operation.ts';

const tag = 'Table rows';
// The domain's write reports, with their rows referring to the named model instead of copying it.
const Written = Type.Object({ ...WriteAnswer.properties, rows: Type.Array(Model.Row) });
const Upserted = Type.Object({
  ...UpsertAnswer.properties,
  inserted: Type.Array(Model.Row),
  updated: Type.Array(Model.Row),
});
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
    response: Type.Object({ row: Model.Row }),
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
    response: Written,
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
    response: Written,
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
      rows: NewRows,
      keyColumn: Type.Optional(Type.String({ minLength: 1, maxLength: MAX_COLUMN_NAME, default: 'id' })),
      waitComputed,
    },
    response: Upserted,
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
  }),
] as const;
