import { Type } from 'typebox';
import { GenerationRequestFields, GenerationResponseSchema, ModelSchema } from '../../domain/llm/schemas.ts';
import { operation } from '../operation.ts';

const tag = 'Cognitive';

/** The body of `generate-text` and of `generate-text-stream`: the two shapes the official clients send. */
export const GenerationBody = GenerationRequestFields;

export const cognitiveOperations = [
  operation({
    id: 'generateText',
    method: 'POST',
    path: '/generate-text',
    access: 'write',
    tag,
    summary: 'Generate text with a language model',
    description:
      '`model` is `best`, `fast`, `auto`, `default:<model>` or an ordered fallback array of them; a model of a provider this server does not have is answered by `best`, with a warning. The legacy `generateContent` input of the `llm` interface is accepted too. `options.requestId` is an idempotency key; an identical request is answered from a cache for an hour unless `options.skipCache`.',
    body: GenerationBody,
    response: GenerationResponseSchema,
  }),
  operation({
    id: 'listModels',
    method: 'GET',
    path: '/models',
    access: 'read',
    tag,
    summary: 'List the language models a bot may name',
    response: Type.Object({ models: Type.Array(ModelSchema) }),
  }),
] as const;

/**
 * The streamed `generateText`: declared here like every operation, but routed by hand
 * (`api/cognitive/index.ts`), since its answer is NDJSON written as the provider streams it.
 */
export const generateTextStream = operation({
  id: 'generateTextStream',
  method: 'POST',
  path: '/generate-text-stream',
  access: 'write',
  tag,
  summary: 'Generate text with a language model, as it is written',
  description:
    'The request of `generateText`; the answer is NDJSON (`application/x-ndjson`), one chunk per line as the provider streams it (`output`, `reasoning`), the last with `finished: true` and the `metadata`. An error before the first chunk is answered as an error; one after it ends the stream without that last chunk. A client that goes away cancels the provider’s request.',
  body: GenerationBody,
  response: Type.String({ description: 'application/x-ndjson' }),
});
