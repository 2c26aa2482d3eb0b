import type { APIS } from '../contract/apis.ts';
import type { Client, OutputOf } from '../contract/client.ts';

type TablesOps = typeof APIS.tables.operations;

/** The Tables API's client, as the bot the CLI acts for. */
export type TablesClient = Client<TablesOps>;

/** A table as the Tables API answers it. */
export type RemoteTable = OutputOf<TablesOps, 'getTable'>['table'];

/** A table's job (export, import...) as the Tables API answers it. */
export type RemoteTableJob = OutputOf<TablesOps, 'getTableJobs'>['jobs'][number];

/** A table's columns by name, each its JSON Schema (the `properties` of the table's schema). */
export function columnSchemas(table: RemoteTable): Record<string, Record<string, unknown>> {
  const { properties } = table.schema;
  if (typeof properties !== 'object' || properties === null || Array.isArray(properties)) return {};
  return Object.fromEntries(
    Object.entries(properties).flatMap(([name, column]) =>
      typeof column === 'object' && column !== null && !Array.isArray(column) ? [[name, column]] : [],
    ),
  );
}
