import type { BotActor } from '../../domain/workspace/actors.ts';
import type { transcriptionOperations } from '../../contract/cognitive/transcription.ts';
import type { Handlers } from '../operation.ts';

export const transcriptionHandlers = {
  transcribeAudio: (d, actor, request) => d.transcriptions.transcribe(actor, request),
} satisfies Handlers<BotActor, typeof transcriptionOperations>;
