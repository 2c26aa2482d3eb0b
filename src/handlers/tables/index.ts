import type { BotActor } from '../../domain/workspace/actors.ts';
import { TABLES_OPERATIONS } from '../../contract/tables/index.ts';
import { implement } from '../operation.ts';
import { jobHandlers } from './jobs.ts';
import { rowHandlers } from './rows.ts';
import { tableHandlers } from './tables.ts';

/** The Tables API's operations bound to the domain, as its routes and bot code's client run them. */
export const TABLES_HANDLERS = implement<BotActor>()(TABLES_OPERATIONS, {
  ...jobHandlers,
  ...rowHandlers,
  ...tableHandlers,
});
