import { COGNITIVE_OPERATIONS } from './cognitive/index.ts';
import { FILES_OPERATIONS } from './files/index.ts';
import { RUNTIME_OPERATIONS } from './runtime/index.ts';
import { TABLES_OPERATIONS } from './tables/index.ts';

/**
 * What bot code's `client` offers: the operations of every API a bot calls as itself (the Runtime
 * API, the Files API, the Tables API and the Cognitive API's model calls).
 */
export const BOT_OPERATIONS = [
  ...RUNTIME_OPERATIONS,
  ...FILES_OPERATIONS,
  ...TABLES_OPERATIONS,
  ...COGNITIVE_OPERATIONS,
] as const;
