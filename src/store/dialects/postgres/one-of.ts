import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';

/** Whether the text `column` is one of `values`, however many: one parameter (an array), never a list of them. */
export function oneOf(column: RawBuilder<unknown>, values: readonly string[]): RawBuilder<SqlBool> {
  return sql<SqlBool>`${column} = any(${[...values]}::text[])`;
}
