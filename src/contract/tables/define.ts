import type { BotActor } from '../../domain/workspace/actors.ts';
import { operationsFor } from '../operation.ts';

/** Tables API operations act as one bot (or an integration of it), like the Runtime API's. */
export const { operation } = operationsFor<BotActor>();
