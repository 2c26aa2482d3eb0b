// What the LLM scenario asks and what it is answered: the provider (bench/lib/model-provider.ts) echoes
// the last user text, one token a chunk, so the prompt sets the reply's length, and each stream's number
// in its prompt makes its reply its own (a reply mixed up with another's, or cached, shows).
import { countTokens } from '../../test/helpers/model-tokens.ts';

/** 45 words: with `Stream <n>:` before them and `echo:` before that, a reply of 50 tokens. */
const WORDS =
  'the gateway forwards each request to the provider and writes every token back to the bot as soon as ' +
  'it arrives so that a reply starts on the screen while the model is still writing the rest of the ' +
  'answer and keeps the wait short';

export function prompt(stream: number): string {
  return `Stream ${stream}: ${WORDS}`;
}

/** The provider's reply to `prompt(stream)` (test/helpers/model-replies.ts). */
export function expectedReply(stream: number): string {
  return `echo: ${prompt(stream)}`;
}

/** Tokens of each reply (the stream's number is one whatever its digits), as the provider counts them. */
export const REPLY_TOKENS = countTokens(expectedReply(0));
