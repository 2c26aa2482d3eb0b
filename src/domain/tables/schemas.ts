import { Type } from 'typebox';
import type { JsonObject as JsonObjectValue } from '../shared/json.ts';
import { INT32, JsonObject, JsonValue, TagChangeMap, TagMap, Timestamp } from '../shared/schemas.ts';
import {
  MAX_TABLE_NAME,
  MAX_COLUMN_NAME,
  MAX_FACTOR,
  MAX_ROWS_PER_CALL,
  FIND_LIMIT_DEFAULT,
  FIND_LIMIT_MAX,
} from './limits.ts';
import { TABLE_JOB_STATUSES, TABLE_JOB_TYPES } from '../../value-sets.ts';

/** The Tables API's resources and bodies, as `@botpress/client` 1.45.0 sends and expects them. */

export const TableName = Type.String({ minLength: 1, maxLength: MAX_TABLE_NAME });
export const ColumnName = Type.String({ minLength: 1, maxLength: MAX_COLUMN_NAME });
export const Factor = Type.Integer({
  minimum: 1,
  maximum: MAX_FACTOR,
  description: 'Row size limit: 4 KB × factor',
});
/** Row ids: PostgreSQL integers. */
export const RowId = Type.Integer({ minimum: 1, maximum: INT32.maximum });

export const TableSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  factor: Type.Integer(),
  frozen: Type.Boolean(),
  keyColumn: Type.Union([Type.String(), Type.Null()]),
  schema: JsonObject,
  tags: Type.Record(Type.String(), Type.String()),
  isComputeEnabled: Type.Boolean(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

/** A row: the system fields, then the columns at the top level. */
export const RowSchema = Type.Object(
  {
    id: Type.Integer(),
    createdAt: Timestamp,
    updatedAt: Timestamp,
    computed: JsonObject,
    stale: Type.Array(Type.String()),
    similarity: Type.Optional(Type.Number()),
  },
  { additionalProperties: true },
);

/** What the settings of a table are in a create, get-or-create or update. */
export const TableSettingsBody = {
  factor: Type.Optional(Factor),
  frozen: Type.Optional(Type.Boolean()),
  keyColumn: Type.Optional(Type.Union([ColumnName, Type.Null()])),
  tags: Type.Optional(TagMap),
  isComputeEnabled: Type.Optional(Type.Boolean()),
};

export const TableSchemaInput = Type.Unsafe<unknown>(
  Type.Record(Type.String(), Type.Unknown(), {
    description: 'A JSON Schema of the columns (`{ type: "object", properties }`), or an example row',
  }),
);
export const TableSchemaPatch = Type.Unsafe<unknown>(
  Type.Record(Type.String(), Type.Unknown(), {
    description:
      'Columns to add or change (a JSON Schema fragment or an example value), `null` to remove one',
  }),
);
export const TagChanges = TagChangeMap;

export const TableStatusFields = {
  rows: Type.Integer({ description: 'The number of rows' }),
  stale: Type.Integer(),
  indexing: Type.Integer(),
};

export const JobSchema = Type.Object({
  id: Type.String(),
  botId: Type.String(),
  tableId: Type.String(),
  type: Type.Enum(TABLE_JOB_TYPES),
  status: Type.Enum(TABLE_JOB_STATUSES),
  progress: Type.Optional(Type.Number()),
  inputFileId: Type.Union([Type.String(), Type.Null()]),
  outputFileId: Type.Union([Type.String(), Type.Null()]),
  failedReason: Type.Optional(Type.String()),
  createdAt: Timestamp,
  updatedAt: Timestamp,
});

const WriteReportFields = {
  warnings: Type.Optional(Type.Array(Type.String())),
  errors: Type.Optional(Type.Array(Type.String())),
};
export const WriteAnswer = Type.Object({ rows: Type.Array(RowSchema), ...WriteReportFields });
export const UpsertAnswer = Type.Object({
  inserted: Type.Array(RowSchema),
  updated: Type.Array(RowSchema),
  ...WriteReportFields,
});

export const NewRows = Type.Array(JsonObject, { minItems: 1, maxItems: MAX_ROWS_PER_CALL });
/** A row to update: its id, and the columns that change. */
export const RowUpdate = Type.Unsafe<JsonObjectValue & { id: number }>(
  Type.Object({ id: RowId }, { additionalProperties: true }),
);
export const RowUpdates = Type.Array(RowUpdate, { minItems: 1, maxItems: MAX_ROWS_PER_CALL });

export const FindBody = {
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: FIND_LIMIT_MAX, default: FIND_LIMIT_DEFAULT })),
  offset: Type.Optional(Type.Integer({ minimum: 0 })),
  filter: Type.Optional(JsonObject),
  group: Type.Optional(JsonObject),
  search: Type.Optional(Type.String({ maxLength: 1024 })),
  select: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 100 })),
  orderBy: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  orderDirection: Type.Optional(Type.Enum(['asc', 'desc'])),
};

export const FoundAnswer = Type.Object({
  rows: Type.Array(Type.Record(Type.String(), JsonValue)),
  hasMore: Type.Boolean(),
  offset: Type.Integer(),
  limit: Type.Integer(),
  warnings: Type.Optional(Type.Array(Type.String())),
});
