import { TranscriptionRequestFields, TranscriptionResponseSchema } from '../../domain/llm/schemas.ts';
import { operation } from '../operation.ts';

export const transcriptionOperations = [
  operation({
    id: 'transcribeAudio',
    method: 'POST',
    path: '/transcribe-audio',
    access: 'write',
    tag: 'Cognitive',
    summary: 'Transcribe audio to text',
    description:
      'Through the provider’s OpenAI-compatible `POST /audio/transcriptions`. `url` is a `data:` URI in base64, a file’s URL of the Files API, or any public http(s) URL (up to 25 MB). `model` is `auto` (`best`, `fast`: the provider’s transcription model), `default:<model>` or a fallback array; a model of a provider this server does not have is answered by the transcription model. A provider without transcriptions answers `400 Runtime`, saying so. `options.requestId` is an idempotency key; the same audio is answered from a cache for an hour unless `options.skipCache`.',
    body: TranscriptionRequestFields,
    response: TranscriptionResponseSchema,
  }),
] as const;
