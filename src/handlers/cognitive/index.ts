import type { BotActor } from '../../domain/workspace/actors.ts';
import { COGNITIVE_OPERATIONS } from '../../contract/cognitive/index.ts';
import { implement } from '../operation.ts';
import { cognitiveHandlers } from './generation.ts';
import { transcriptionHandlers } from './transcription.ts';

/** The Cognitive API's operations bound to the domain, as its routes and bot code's client run them. */
export const COGNITIVE_HANDLERS = implement<BotActor>()(COGNITIVE_OPERATIONS, {
  ...cognitiveHandlers,
  ...transcriptionHandlers,
});
