import { FILES_OPERATIONS } from './files/index.ts';
import { RUNTIME_OPERATIONS } from './runtime/index.ts';
import { TABLES_OPERATIONS } from './tables/index.ts';

/**
 * What bot code's `client` offers: the operations of every API a bot calls as itself (the Runtime
 * API, the Files API and the Tables API).
 */
export const BOT_OPERATIONS = [...RUNTIME_OPERATIONS, ...FILES_OPERATIONS, ...TABLES_OPERATIONS] as const;
