import type { TableJob } from '../domain/tables/jobs.ts';
import type { ApiClient } from './api.ts';

/** A column of a table's schema, as the CLI reads it. */
interface RemoteColumn {
  type?: string;
  format?: string;
  'x-zui'?: { index?: number };
}

/** The fields of a table the CLI uses (the Tables API's Table). */
export interface RemoteTable {
  id: string;
  name: string;
  factor: number;
  keyColumn: string | null;
  tags: Record<string, string>;
  schema: { properties?: Record<string, RemoteColumn> };
}

/** The fields of a job the CLI uses (the Tables API's job, as the server answers it). */
export type RemoteTableJob = Pick<TableJob, 'id' | 'status' | 'outputFileId' | 'failedReason'>;

/** The route of one table, named by its name or its id. */
export const tableRoute = (table: string) => `/v1/tables/${encodeURIComponent(table)}`;

/** The bot's tables (listTables). */
export async function listTables(api: ApiClient): Promise<RemoteTable[]> {
  const { tables } = await api.request<{ tables: RemoteTable[] }>('GET', '/v1/tables');
  return tables;
}
