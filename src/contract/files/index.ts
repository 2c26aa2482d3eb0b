import { fileOperations } from './files.ts';
import { knowledgeBaseOperations } from './knowledge-bases.ts';
import { passageOperations } from './passages.ts';
import { searchOperations } from './search.ts';
import { fileTagOperations } from './tags.ts';

/**
 * The Files API (`/v1/files`), every operation declared once: its HTTP routes and the `client` bot
 * code gets are generated from this table. The content itself moves outside it (src/api/files/content.ts).
 */
export const FILES_OPERATIONS = [
  ...fileOperations,
  ...searchOperations,
  ...passageOperations,
  ...fileTagOperations,
  ...knowledgeBaseOperations,
] as const;
