import { cognitiveOperations } from './generation.ts';
import { transcriptionOperations } from './transcription.ts';

/**
 * The Cognitive API (`/v2/cognitive`): the hosted platform's model calls, answered by the operator's
 * provider. `generate-text-stream` answers NDJSON and is routed beside these (`api/cognitive`).
 */
export const COGNITIVE_OPERATIONS = [...cognitiveOperations, ...transcriptionOperations] as const;

/** The Cognitive API's stream, declared as an operation but routed by hand: see generation.ts. */
export { generateTextStream } from './generation.ts';
