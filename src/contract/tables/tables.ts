import { Type } from 'typebox';
import {
  ColumnName,
  Factor,
  TableName,
  TableSchemaInput,
  TableSchemaPatch,
  TableSettingsBody,
  TableStatusFields,
  TagChanges,
} from '../../domain/tables/schemas.ts';
import { TagMap } from '../../domain/shared/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { Model } from '../models.ts';
import { operation } from '../operation.ts';

const tag = 'Tables';
/** `{table}`: a table's id or its name. */
export const TableRef = {
  table: Type.String({ minLength: 1, maxLength: 200, description: 'The table’s id or name' }),
};
const TableAnswer = Type.Object({ table: Model.Table });

export const tableOperations = [
  operation({
    id: 'createTable',
    method: 'POST',
    path: '/tables',
    access: 'write',
    tag,
    summary: 'Create a table',
    description:
      'The schema is a JSON Schema of the columns or an example row; the server numbers the columns (`x-zui.index`). At most 20 columns.',
    body: { name: TableName, schema: TableSchemaInput, ...TableSettingsBody },
    response: TableAnswer,
  }),
  operation({
    id: 'getTable',
    method: 'GET',
    path: '/tables/:table',
    access: 'read',
    tag,
    summary: 'Get a table, with its number of rows',
    params: TableRef,
    response: Type.Object({ table: Model.Table, ...TableStatusFields }),
  }),
  operation({
    id: 'getOrCreateTable',
    method: 'POST',
    path: '/tables/:table',
    access: 'write',
    tag,
    summary: 'Get a table by name, or create it',
    description:
      'A table of that name is answered as it is (its schema is not changed); otherwise it is created.',
    params: TableRef,
    body: { schema: TableSchemaInput, ...TableSettingsBody },
    response: Type.Object({ table: Model.Table, created: Type.Boolean(), ...TableStatusFields }),
  }),
  operation({
    id: 'updateTable',
    method: 'PUT',
    path: '/tables/:table',
    access: 'write',
    tag,
    summary: 'Rename a table, change its columns or settings',
    description:
      '`schema` is a patch: new keys add columns, changed ones change (a new type empties the column), `null` removes one. A frozen table refuses name and schema changes (403). `factor` only grows.',
    params: TableRef,
    body: {
      name: Type.Optional(TableName),
      schema: Type.Optional(TableSchemaPatch),
      factor: Type.Optional(Factor),
      frozen: TableSettingsBody.frozen,
      keyColumn: TableSettingsBody.keyColumn,
      tags: Type.Optional(TagChanges),
      isComputeEnabled: TableSettingsBody.isComputeEnabled,
    },
    response: Type.Object({ table: Model.Table, staleColumns: Type.Optional(Type.Array(Type.String())) }),
  }),
  operation({
    id: 'renameTableColumn',
    method: 'PUT',
    path: '/tables/:table/column',
    access: 'write',
    tag,
    summary: 'Rename a column (its values stay)',
    params: TableRef,
    body: { name: Type.String({ minLength: 1 }), newName: ColumnName },
    response: TableAnswer,
  }),
  operation({
    id: 'deleteTable',
    method: 'DELETE',
    path: '/tables/:table',
    access: 'write',
    tag,
    summary: 'Delete a table and its rows',
    params: TableRef,
    response: EmptySchema,
  }),
  operation({
    id: 'listTables',
    method: 'GET',
    path: '/tables',
    access: 'read',
    tag,
    summary: 'List the bot’s tables (all of them: no pages)',
    query: { tags: Type.Optional(TagMap) },
    response: Type.Object({ tables: Type.Array(Model.Table) }),
  }),
  operation({
    id: 'duplicateTable',
    method: 'POST',
    path: '/tables/:sourceTableId/duplicate',
    access: 'write',
    tag,
    summary: 'Copy a table (its schema, and its rows unless `schemaOnly`)',
    params: { sourceTableId: TableRef.table },
    body: {
      tableName: Type.Optional(TableName),
      schemaOnly: Type.Optional(Type.Boolean()),
      factor: Type.Optional(Factor),
    },
    response: Type.Object({ table: Model.Table, rows: Type.Integer() }),
  }),
] as const;
