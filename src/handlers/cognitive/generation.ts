import type { BotActor } from '../../domain/workspace/actors.ts';
import type { cognitiveOperations } from '../../contract/cognitive/generation.ts';
import type { Handlers } from '../operation.ts';

export const cognitiveHandlers = {
  generateText: (d, actor, request) => d.llm.generate(actor, request),
  listModels: async (d, actor) => ({ models: await d.llm.listModels(actor) }),
} satisfies Handlers<BotActor, typeof cognitiveOperations>;
