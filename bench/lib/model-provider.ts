// The LLM scenario's provider: the tests' OpenAI-compatible model server (test/helpers/model-server.ts)
// in a process of its own, started by bench/run.ts, so that its work is not done by Parley's process nor
// by the one that measures. Its streams are paced like a fast hosted model's: PACING.firstTokenDelayMs
// before the first token, then PACING.tokenDelayMs between tokens. It answers every chat completion with
// `echo: <the last user text>`, one token a chunk: the prompts of bench/lib/llm-prompt.ts set its length.
// Its third model, SLOW_MODEL, answers after a fixed SLOW_MODEL_MS, as a model of the AI-turn scenario.
// Its embedding model, EMBEDDING_MODEL, is the tests' deterministic embedder with the retrieval corpus's
// synonyms (bench/lib/retrieval-corpus.ts), in vectors of EMBEDDING_DIMENSIONS, the size of a small
// real model's. Prints one line, `{"ready":true,...}` (ProviderReady), once it listens.
import { startModelServer } from '../../test/helpers/model-server.ts';
import type { Pacing } from '../../test/helpers/model-server.ts';
import type { LlmProvider } from './parley.ts';
import { benchCorpus } from './retrieval-corpus.ts';

export interface ProviderReady extends LlmProvider {
  ready: true;
  pacing: Pacing;
  /** The model that answers after `slowModelMs`, whatever it is asked. */
  slowModel: string;
  slowModelMs: number;
  /** The model of `/embeddings`, as PARLEY_EMBEDDINGS_MODEL names it. */
  embeddingModel: string;
}

const PACING: Pacing = { firstTokenDelayMs: 20, tokenDelayMs: 2 };
const MODELS = { best: 'bench-best', fast: 'bench-fast' };
const SLOW_MODEL = 'bench-slow';
const SLOW_MODEL_MS = 1000;
const EMBEDDING_MODEL = 'bench-embeddings';
const EMBEDDING_DIMENSIONS = 384;
/** How often the server's record of the requests it received is emptied: nothing reads it here. */
const FORGET_EVERY_MS = 1000;

const server = await startModelServer({
  models: [MODELS.best, MODELS.fast, SLOW_MODEL, EMBEDDING_MODEL],
  pacing: PACING,
  embeddingModels: {
    [EMBEDDING_MODEL]: { dimensions: EMBEDDING_DIMENSIONS, synonyms: benchCorpus().synonyms },
  },
});
server.fail({ kind: 'latency', ms: SLOW_MODEL_MS }, { model: SLOW_MODEL, times: Infinity });
setInterval(() => server.requests.splice(0), FORGET_EVERY_MS).unref();
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => void server.close().finally(() => process.exit(0)));
}
const ready: ProviderReady = {
  ready: true,
  url: server.url,
  models: MODELS,
  pacing: PACING,
  slowModel: SLOW_MODEL,
  slowModelMs: SLOW_MODEL_MS,
  embeddingModel: EMBEDDING_MODEL,
};
process.stdout.write(`${JSON.stringify(ready)}\n`);
