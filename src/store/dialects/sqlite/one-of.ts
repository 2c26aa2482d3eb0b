import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';

/** Whether `column` is one of `values`, however many: one parameter (a JSON array), never a list of them. */
export function oneOf(column: RawBuilder<unknown>, values: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`${column} in (select value from json_each(${JSON.stringify(values)}))`;
}
