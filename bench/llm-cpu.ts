// What one streamed completion costs Parley's process in CPU, the figure the LLM scenario's latencies
// hang on at 64 streams at a time (issue 31) and one a busy machine does not move much: the scenario's
// provider, Parley and its load generator as `npm run bench` starts them, then `--streams` streams at
// `--concurrency` a time, `--rounds` times, each round's CPU of Parley's process (/proc) over its
// streams. `--profile` runs Parley under `--cpu-prof` and prints where its CPU went (the warm-up, the
// rounds and the start-up together). Needs `npm run build:server`, as the bench does.
//   node --import tsx bench/llm-cpu.ts [--concurrency 64] [--streams 512] [--rounds 5] [--profile]
import { mkdtemp } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { JobProcess } from './lib/job-process.ts';
import type { LlmStreamsJob, LlmStreamsResult } from './lib/llm-load.ts';
import { REPLY_TOKENS } from './lib/llm-prompt.ts';
import { startModelProvider } from './lib/provider-process.ts';
import { APIS, mountOf } from './lib/api.ts';
import { generateTextStream } from '../src/contract/cognitive/index.ts';
import { botApiKey, botHeadersOf, llmSettings, ownerAdmin, ROOT, startParley } from './lib/parley.ts';
import { cpuSplitMs, stopAll } from './lib/procs.ts';
import { summarizeProfiles } from './lib/profile.ts';
import { median, summarize } from './lib/stats.ts';

const { values: options } = parseArgs({
  options: {
    concurrency: { type: 'string', default: '64' },
    streams: { type: 'string', default: '512' },
    rounds: { type: 'string', default: '5' },
    profile: { type: 'boolean', default: false },
  },
});
const concurrency = Number(options.concurrency);
const streams = Number(options.streams);
const rounds = Number(options.rounds);

let server: Awaited<ReturnType<typeof startParley>> | undefined;
try {
  const provider = await startModelProvider();
  const profileDir = options.profile ? await mkdtemp(path.join(os.tmpdir(), 'parley-llm-cpu-')) : '';
  server = await startParley(
    'sqlite',
    options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
    llmSettings(provider),
  );
  const { bot } = await ownerAdmin(server).createBot({ name: 'llm-cpu' });
  const headers = botHeadersOf(bot.id, await botApiKey(server, bot.id));
  const load = await JobProcess.start<LlmStreamsJob, LlmStreamsResult>(
    'LLM load generator',
    path.join(ROOT, 'bench', 'lib', 'llm-load.ts'),
    ROOT,
  );
  const { firstTokenDelayMs, tokenDelayMs } = provider.pacing;
  const job = {
    wire: 'parley' as const,
    url: `${server.url}${mountOf(APIS.cognitive)}${generateTextStream.path}`,
    headers,
    model: 'best',
    streams,
    concurrency,
    staggerMs: firstTokenDelayMs + REPLY_TOKENS * tokenDelayMs,
  };
  let firstStream = 0;
  const perStream: number[] = [];
  for (let round = 0; round <= rounds; round++) {
    const before = cpuSplitMs(server.proc.pid);
    const result = await load.run({ ...job, firstStream });
    firstStream += streams;
    const after = cpuSplitMs(server.proc.pid);
    const system = (after.system - before.system) / result.ttftMs.length;
    const cpu = (after.user - before.user) / result.ttftMs.length + system;
    const ttft = summarize(result.ttftMs);
    const total = summarize(result.totalMs);
    process.stdout.write(
      `${round === 0 ? 'warm-up' : `round ${round}`}: ${cpu.toFixed(2)} ms of CPU a stream (${system.toFixed(2)} in the kernel), first token p50 ${ttft.p50.toFixed(1)} p99 ${ttft.p99.toFixed(1)} ms, last byte p50 ${total.p50.toFixed(1)} p99 ${total.p99.toFixed(1)} ms, ${result.errors} errors${result.firstError ? ` (${result.firstError})` : ''}\n`,
    );
    if (round > 0) perStream.push(cpu);
  }
  process.stdout.write(
    `median: ${median(perStream).toFixed(2)} ms of Parley's CPU a stream of ${REPLY_TOKENS} tokens, ${concurrency} at a time\n`,
  );
  if (options.profile) {
    await server.stop();
    for (const summary of await summarizeProfiles(profileDir, 40)) {
      process.stdout.write(`profile ${summary.file}: ${(summary.totalMs / 1000).toFixed(1)} s sampled\n`);
      for (const e of summary.top)
        process.stdout.write(
          `  ${e.percent.toFixed(1).padStart(5)}% ${e.selfMs.toFixed(0).padStart(6)} ms  ${e.name} ${e.where}\n`,
        );
    }
    process.stdout.write(`profiles kept in ${profileDir}\n`);
  }
} finally {
  await server?.stop();
  await stopAll();
}
