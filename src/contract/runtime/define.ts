import type { BotActor } from '../../domain/workspace/actors.ts';
import { operationsFor } from '../operation.ts';

/** Runtime API operations act as one bot. */
export const { operation, listOperation } = operationsFor<BotActor>();
