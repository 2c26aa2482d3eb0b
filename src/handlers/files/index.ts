import type { BotActor } from '../../domain/workspace/actors.ts';
import { FILES_OPERATIONS } from '../../contract/files/index.ts';
import { implement } from '../operation.ts';
import { fileHandlers } from './files.ts';
import { knowledgeBaseHandlers } from './knowledge-bases.ts';
import { passageHandlers } from './passages.ts';
import { searchHandlers } from './search.ts';
import { fileTagHandlers } from './tags.ts';

/** The Files API's operations bound to the domain, as its routes and bot code's client run them. */
export const FILES_HANDLERS = implement<BotActor>()(FILES_OPERATIONS, {
  ...fileHandlers,
  ...knowledgeBaseHandlers,
  ...passageHandlers,
  ...searchHandlers,
  ...fileTagHandlers,
});
