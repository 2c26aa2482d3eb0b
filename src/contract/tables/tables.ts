import { Type } from 'typebox';
import {
  Factor,
  TableName,
  TableSchema,
  TableSchemaInput,
  TableSchemaPatch,
  TableSettingsBody,
  TableStatusFields,
  TagChanges,
} from '../../domain/tables/schemas.ts';
import { TagMap } from '../../domain/shared/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { operation } from './define.ts';

const tag = 'Tables';
/** `{table}`: a table's id or its name. */
export const TableRef = {
  table: Type.String({ minLength: 1, maxLength: 200, description: 'The table’s id or name' }),
};
const TableAnswer = Type.Object({ table: TableSchema });

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
    handler: async (d, actor, body) => ({ table: await d.tables.create(actor, body) }),
  }),
  operation({
    id: 'getTable',
    method: 'GET',
    path: '/tables/:table',
    access: 'read',
    tag,
    summary: 'Get a table, with its number of rows',
    params: TableRef,
    response: Type.Object({ table: TableSchema, ...TableStatusFields }),
    handler: (d, actor, { table }) => d.tables.get(actor, table),
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
    response: Type.Object({ table: TableSchema, created: Type.Boolean(), ...TableStatusFields }),
    handler: (d, actor, { table, ...body }) => d.tables.getOrCreate(actor, table, body),
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
    response: Type.Object({ table: TableSchema, staleColumns: Type.Optional(Type.Array(Type.String())) }),
    handler: (d, actor, { table, ...patch }) => d.tables.update(actor, table, patch),
  }),
  operation({
    id: 'renameTableColumn',
    method: 'PUT',
    path: '/tables/:table/column',
    access: 'write',
    tag,
    summary: 'Rename a column (its values stay)',
    params: TableRef,
    body: { name: Type.String({ minLength: 1 }), newName: Type.String({ minLength: 1, maxLength: 30 }) },
    response: TableAnswer,
    handler: async (d, actor, { table, name, newName }) => ({
      table: await d.tables.renameColumn(actor, table, name, newName),
    }),
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
    handler: async (d, actor, { table }) => {
      await d.tables.delete(actor, table);
      return {};
    },
  }),
  operation({
    id: 'listTables',
    method: 'GET',
    path: '/tables',
    access: 'read',
    tag,
    summary: 'List the bot’s tables (all of them: no pages)',
    query: { tags: Type.Optional(TagMap) },
    response: Type.Object({ tables: Type.Array(TableSchema) }),
    handler: async (d, actor, { tags }) => ({ tables: await d.tables.list(actor, tags) }),
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
    response: Type.Object({ table: TableSchema, rows: Type.Integer() }),
    handler: (d, actor, { sourceTableId, ...options }) => d.tables.duplicate(actor, sourceTableId, options),
  }),
];
