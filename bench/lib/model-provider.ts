// The LLM scenario's provider: the tests' OpenAI-compatible model server (test/helpers/model-server.ts)
// in a process of its own, started by bench/run.ts, so that its work is not done by Parley's process nor
// by the one that measures. Its streams are paced like a fast hosted model's: PACING.firstTokenDelayMs
// before the first token, then PACING.tokenDelayMs between tokens. It answers every chat completion with
// `echo: <the last user text>`, one token a chunk: the prompts of bench/lib/llm-prompt.ts set its length.
// Prints one line, `{"ready":true,...}` (ProviderReady), once it listens.
import { startModelServer } from '../../test/helpers/model-server.ts';
import type { Pacing } from '../../test/helpers/model-server.ts';
import type { LlmProvider } from './parley.ts';

export interface ProviderReady extends LlmProvider {
  ready: true;
  pacing: Pacing;
}

const PACING: Pacing = { firstTokenDelayMs: 20, tokenDelayMs: 2 };
const MODELS = { best: 'bench-best', fast: 'bench-fast' };
/** How often the server's record of the requests it received is emptied: nothing reads it here. */
const FORGET_EVERY_MS = 1000;

const server = await startModelServer({ models: [MODELS.best, MODELS.fast], pacing: PACING });
setInterval(() => server.requests.splice(0), FORGET_EVERY_MS).unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().finally(() => process.exit(0)));
}
const ready: ProviderReady = { ready: true, url: server.url, models: MODELS, pacing: PACING };
process.stdout.write(`${JSON.stringify(ready)}\n`);
