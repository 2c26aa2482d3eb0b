import type { Operation } from './operation.ts';
import type { BotActor } from '../domain/workspace/actors.ts';
import { COGNITIVE_HANDLERS } from './cognitive/index.ts';
import { FILES_HANDLERS } from './files/index.ts';
import { RUNTIME_HANDLERS } from './runtime/index.ts';
import { TABLES_HANDLERS } from './tables/index.ts';

/** Bot code's `client` (contract/bot-operations.ts) bound to the domain, as the bot. */
export const BOT_HANDLERS: readonly Operation<BotActor>[] = [
  ...RUNTIME_HANDLERS,
  ...FILES_HANDLERS,
  ...TABLES_HANDLERS,
  ...COGNITIVE_HANDLERS,
];
