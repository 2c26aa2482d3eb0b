import { jobOperations } from './jobs.ts';
import { rowOperations } from './rows.ts';
import { tableOperations } from './tables.ts';

/**
 * The Tables API (`/v1/tables`), every operation declared once: its HTTP routes and the `client` bot
 * code gets are generated from this table.
 */
export const TABLES_OPERATIONS = [...tableOperations, ...rowOperations, ...jobOperations] as const;
