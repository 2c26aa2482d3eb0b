// `npm run bench` (and `npm run bench -- --quick`): Parley against peer bot frameworks and against this
// machine's ceiling, everything started here on 127.0.0.1 and stopped at the end. Parley's chat round
// trip and live fan-out run with SSE listeners and again with WebSocket ones (rows named `…, WebSocket`).
// Prints one table and writes bench/results/latest.json. Options: --quick, --no-pin, --profile,
// --scenarios chat,sdk,held,overload,actions,fanout,search,tables,llm,aiturn,retrieval, --stores sqlite,postgres,
// --overload-seconds (the overload's measured window, 60 by default), --overload-rate (the overload's offer
// in msg/s). `overload` offers twice the closed-loop capacity of the chat round trip (or the rate given)
// and counts what admission control refuses. `sdk` is
// the chat round trip of the echo bot of `bp init`, deployed as `bp deploy` does, and its cold start.
// `llm` is what the LLM gateway adds to a streamed completion (first token, last byte), 1 and 64 streams
// at a time, beside the same streams asked of the provider directly. `aiturn` is the held load on a bot
// whose replies come from an AI card's model answering in a fixed 1 s: what Parley adds to it.
// `retrieval` is search quality (recall@5, MRR) and latency by words, by meaning and both, on a
// generated corpus of known answers at 2,000 and 100,000 passages (not in the default set: see below).
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { BENCH_DIR, peersInstalled } from './lib/bench-modules.ts';
import { HttpConnection } from './lib/http-client.ts';
import { generateTextStream } from '../src/contract/cognitive/index.ts';
import { collect, specOf } from '../src/contract/client.ts';
import { HEADERS } from '../src/contract/headers.ts';
import { PAGE_SIZE_MAX } from '../src/domain/shared/page-size.ts';
import { APIS, filesApi, mountOf, pathOf, rawCall, tablesApi } from './lib/api.ts';
import {
  botApiKey,
  botHeadersOf,
  chatUserAndConversation,
  deploy,
  llmSettings,
  ownerAdmin,
  parleyData,
  POSTGRES_URL,
  postgresProblem,
  ROOT,
  startParley,
  uncachedActionBot,
  aiTurnBot,
} from './lib/parley.ts';
import type { ParleyServer, StoreName } from './lib/parley.ts';
import type { LlmStreamsJob, LlmStreamsResult, LlmWire } from './lib/llm-load.ts';
import { REPLY_TOKENS } from './lib/llm-prompt.ts';
import type { ProviderReady } from './lib/model-provider.ts';
import { summarizeProfiles } from './lib/profile.ts';
import { buildSdkEchoBundle, deploySdkBundle } from './lib/sdk-bot.ts';
import type { ProfileSummary } from './lib/profile.ts';
import type { TablesLoadJob } from './lib/tables-load.ts';
import { JobProcess } from './lib/job-process.ts';
import {
  cpuMs,
  killAllNow,
  LOAD_CPU,
  pinningOn,
  rssBytes,
  SERVER_CPU,
  setPinning,
  start,
  stop,
  stopAll,
} from './lib/procs.ts';
import type {
  FanoutDeliverResult,
  FanoutOpenResult,
  HeldRunResult,
  Job,
  JobResult,
  ListenProtocol,
  MessageCost,
  RunResult,
} from './lib/protocol.ts';
import { median, round, summarize } from './lib/stats.ts';
import { seeded } from '../src/store/seeded.ts';
import { ANSWERS, ask, botClient, RECALL_AT, recallOf, untilEmbedded, upload } from './lib/retrieval.ts';
import {
  benchCorpus,
  PASSAGES_PER_DOCUMENT,
  RETRIEVAL_QUESTION_DOCUMENTS,
  RETRIEVAL_QUESTIONS,
} from './lib/retrieval-corpus.ts';
import type { SearchRanking, VectorIndexChoice } from '../src/value-sets.ts';
import type { Latency } from './lib/stats.ts';

const { values: options } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'no-pin': { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    scenarios: { type: 'string' },
    stores: { type: 'string' },
    'overload-seconds': { type: 'string' },
    'overload-rate': { type: 'string' },
  },
  allowPositionals: false,
});
const quick = options.quick === true;
setPinning(options['no-pin'] !== true);

const plan = quick
  ? {
      conversations: [1, 16],
      rounds: 1,
      chat: { warmupMs: 300, durationMs: 1500, maxMeasured: 20_000 },
      actionRounds: 1,
      action: { warmupMs: 300, durationMs: 1500, maxMeasured: 100_000 },
      actionConcurrency: 32,
      listeners: [1000],
      webSocketListeners: [1000],
      deliveries: { 1000: 10 } as Record<number, number>,
      held: { conversations: 500, intervalMs: 5000, warmupMs: 5000, durationMs: 15_000, graceMs: 5000 },
      aiTurns: { conversations: 200, intervalMs: 2000, warmupMs: 4000, durationMs: 10_000, graceMs: 5000 },
      overload: { conversations: 500, warmupMs: 3000, durationMs: 15_000, graceMs: 5000 },
      capacity: { warmupMs: 1000, durationMs: 2000, maxMeasured: 20_000 },
      tables: { rows: 10_000, finds: 1000, findWarmup: 100, upserts: 10, upsertWarmup: 2 },
      // timeMs: added to the run's time limit when the scenario runs, for each store.
      retrieval: { passages: [2000, 20_000], largeQuestions: 50, timeMs: 5 * 60_000 },
      llm: { concurrency: [1, 64], rounds: 4, streams: { 1: 10, 64: 128 } as Record<number, number> },
      timeLimitMs: 180_000,
    }
  : {
      conversations: [1, 16, 64],
      rounds: 3,
      chat: { warmupMs: 500, durationMs: 2500, maxMeasured: 50_000 },
      actionRounds: 3,
      action: { warmupMs: 500, durationMs: 2500, maxMeasured: 200_000 },
      actionConcurrency: 32,
      listeners: [1000, 10_000],
      webSocketListeners: [1000, 10_000],
      deliveries: { 1000: 10, 10_000: 5 } as Record<number, number>,
      held: { conversations: 2000, intervalMs: 5000, warmupMs: 5000, durationMs: 30_000, graceMs: 5000 },
      aiTurns: { conversations: 200, intervalMs: 2000, warmupMs: 4000, durationMs: 30_000, graceMs: 5000 },
      overload: { conversations: 2000, warmupMs: 5000, durationMs: 60_000, graceMs: 5000 },
      // A warm-up of its own: run alone, the overload's first requests find the server's code not yet
      // optimized, and a capacity measured then was half what it is (235 against 518 msg/s, one machine).
      capacity: { warmupMs: 3000, durationMs: 5000, maxMeasured: 50_000 },
      tables: { rows: 100_000, finds: 5000, findWarmup: 500, upserts: 30, upsertWarmup: 2 },
      retrieval: { passages: [2000, 100_000], largeQuestions: 50, timeMs: 30 * 60_000 },
      llm: { concurrency: [1, 64], rounds: 8, streams: { 1: 20, 64: 256 } as Record<number, number> },
      timeLimitMs: 18 * 60_000,
    };
if (options['overload-seconds'] !== undefined) {
  const seconds = Number(options['overload-seconds']);
  if (!(seconds > 0)) throw new Error('--overload-seconds takes a positive number of seconds');
  plan.overload.durationMs = seconds * 1000;
}
/** An offer in msg/s fixed by the caller, instead of twice a closed-loop capacity that varies between runs. */
const overloadRate = options['overload-rate'] === undefined ? undefined : Number(options['overload-rate']);
if (overloadRate !== undefined && !(overloadRate > 0))
  throw new Error('--overload-rate takes a positive number of messages a second');
const scenarios = new Set(
  (options.scenarios ?? 'chat,sdk,held,overload,actions,fanout,search,tables,llm,aiturn').split(','),
);
const notes: string[] = [];
const note = (text: string) => {
  notes.push(text);
  log(`note: ${text}`);
};
const t0 = performance.now();
function log(text: string): void {
  process.stdout.write(`[${((performance.now() - t0) / 1000).toFixed(1).padStart(5)} s] ${text}\n`);
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---------------------------------------------------------------------------------------------------
// Cleanup in every case: normal end, error, SIGINT/SIGTERM, and a time limit.

let cleaning: Promise<void> | undefined;
/** Set when a signal or the time limit stops the run: the errors that follow are expected. */
let stopping = false;
const cleanupTasks: (() => Promise<void>)[] = [];
async function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    for (const task of cleanupTasks.splice(0).reverse()) await task().catch(() => {});
    await stopAll();
  })();
  return cleaning;
}
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    log(`${signal}: stopping everything the bench started`);
    stopping = true;
    void cleanup().finally(() => process.exit(130));
  });
}
process.on('exit', killAllNow);
const timeLimitMs =
  plan.timeLimitMs +
  (scenarios.has('retrieval') ? plan.retrieval.timeMs * (options.stores?.split(',').length ?? 2) : 0);
const watchdog = setTimeout(() => {
  log(`time limit (${timeLimitMs / 1000} s) reached: stopping`);
  stopping = true;
  void cleanup().finally(() => process.exit(3));
}, timeLimitMs);
watchdog.unref();

// ---------------------------------------------------------------------------------------------------
// The load process: a separate node process on its own core, jobs over IPC.

/** bench/load.ts: the chat, action and fan-out clients. */
const startLoad = () =>
  JobProcess.start<Job, JobResult>('load generator', path.join(BENCH_DIR, 'load.ts'), ROOT);

// ---------------------------------------------------------------------------------------------------
// Results.

interface Figures {
  rate: number;
  p50: number;
  p95: number;
  p99: number;
}
interface Series {
  scenario: string;
  store: StoreName | '-';
  system: string;
  /** Every round, in run order. */
  runs: RunResult[];
  median: Figures;
}
const chatSeries: (Series & {
  conversations: number;
  /** Parley's: how its listeners read the replies. */
  listen?: ListenProtocol;
  ratio?: Record<string, number>;
  /** Parley's: the median over runs of what one message cost. */
  cost?: MessageCost;
})[] = [];

/** Each figure of the runs' per-message costs, the median over the runs. */
function medianCost(runs: RunResult[]): MessageCost | undefined {
  const costs = runs.flatMap((r) => (r.cost ? [r.cost] : []));
  if (costs.length === 0) return undefined;
  const mid = (pick: (c: MessageCost) => number) => {
    const sorted = costs.map(pick).sort((a, b) => a - b);
    return sorted[Math.floor(sorted.length / 2)] ?? 0;
  };
  return {
    messages: mid((c) => c.messages),
    statements: mid((c) => c.statements),
    commits: mid((c) => c.commits),
    sandboxCalls: mid((c) => c.sandboxCalls),
    cpuMicros: mid((c) => c.cpuMicros),
    sandboxCpuMicros: mid((c) => c.sandboxCpuMicros),
  };
}

function costText(cost: MessageCost): string {
  return `${cost.statements} SQL, ${cost.commits} commits, ${cost.sandboxCalls} sandbox calls, ${num(cost.cpuMicros)} µs CPU (${num(cost.sandboxCpuMicros)} in the sandbox)`;
}
const actionSeries: (Series & {
  ratioToCeiling?: number;
  /** Server CPU per call, microseconds (the ceiling's too): comparable on a loaded machine where rates are not. */
  cpuMicros: number;
  /** Parley's: the median over runs of what one call cost. */
  cost?: MessageCost;
})[] = [];

/** CPU per call: Parley's from its /metrics count of answered calls, any other system's from its rate. */
function cpuMicrosPerCall(run: RunResult): number {
  return run.cost?.cpuMicros ?? Math.round(((run.serverCores ?? NaN) * 1e6) / run.rate);
}

/** What one call cost: Parley's statements and CPU (the sandbox's share apart), any other system's CPU. */
function callCostText(cost: MessageCost | undefined, cpuMicros: number): string {
  return cost
    ? `${cost.statements} SQL, ${num(cost.cpuMicros)} µs CPU (${num(cost.sandboxCpuMicros)} in the sandbox)`
    : `${num(cpuMicros)} µs CPU`;
}
const searchSeries: (Series & { passages: number })[] = [];
const tablesSeries: (Series & {
  /** What `rate` counts: requests, calls or (the load) calls shown as rows. */
  unit: 'req/s' | 'calls/s' | 'rows/s';
  /** Rows each call writes (the upsert's and the load's). */
  rowsPerCall?: number;
  /** Rows in the table when the series started. */
  tableRows: number;
})[] = [];
interface FanoutFigure {
  store: StoreName;
  protocol: ListenProtocol;
  listeners: number;
  open: FanoutOpenResult;
  rssBeforeBytes: number;
  rssOpenBytes: number;
  rssAfterDeliveriesBytes: number;
  sandboxRssBytes: number;
  perListenerBytes: number;
  delivery: FanoutDeliverResult;
  /** CPU shares during the deliveries (server process, load process). */
  deliveryCores: { server: number; load: number };
  /** Medians over deliveries of each delivery's percentiles over listeners (what the table shows). */
  message: Omit<Figures, 'rate'>;
  reply: Omit<Figures, 'rate'>;
}
const fanoutFigures: FanoutFigure[] = [];
/** What a held load's acknowledged message and its turn cost the store, over the run (the server's polls included). */
interface HeldCost {
  perMessage?: { statements: number; commits: number };
}
const heldFigures: (HeldRunResult &
  HeldCost & { store: StoreName; intervalMs: number; open: FanoutOpenResult })[] = [];
/** The overload scenario: the closed-loop capacity measured first, then twice it offered (open loop). */
const overloadFigures: (HeldRunResult &
  HeldCost & { store: StoreName; capacity: number; capacityP99: number })[] = [];
const aiTurnFigures: (HeldRunResult &
  HeldCost & {
    store: StoreName;
    intervalMs: number;
    modelMs: number;
    open: FanoutOpenResult;
  })[] = [];
const profiles: Record<string, ProfileSummary[]> = {};

function mediansOf(runs: RunResult[]): Figures {
  return {
    rate: median(runs.map((r) => r.rate)),
    p50: median(runs.map((r) => r.latency.p50)),
    p95: median(runs.map((r) => r.latency.p95)),
    p99: median(runs.map((r) => r.latency.p99)),
  };
}

/** The median of round-by-round ratios a_i / b_i (each pair measured side by side). */
function pairedRatio(a: RunResult[], b: RunResult[]): number {
  const n = Math.min(a.length, b.length);
  return median(Array.from({ length: n }, (_, i) => (a[i] as RunResult).rate / (b[i] as RunResult).rate));
}

function checkRun(what: string, r: RunResult): void {
  if (r.errors > 0) note(`${what}: ${r.errors} errors (first: ${r.firstError})`);
  if (r.measured === 0) throw new Error(`${what}: nothing was measured (${r.firstError ?? 'no error'})`);
}

/** A scenario's name with the listeners' protocol: SSE's is the name alone (as before WebSocket came). */
function withProtocol(scenario: string, protocol: ListenProtocol | undefined): string {
  return protocol === 'websocket' ? `${scenario}, WebSocket` : scenario;
}

/** Rotates a list by `by` places: each round starts with another system. */
function rotate<T>(list: T[], by: number): T[] {
  const k = by % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}

// ---------------------------------------------------------------------------------------------------

interface Endpoint {
  url: string;
  pid: number;
}
interface Peers {
  botkit?: Endpoint;
  directline?: Endpoint;
  ceiling?: Endpoint;
}

/**
 * Starts `node [nodeArgs] file` (on the servers' core unless said) and waits for the line it prints when
 * it listens, `{"ready":true,"url":...}` and what else it says of itself (`Ready`).
 */
async function startServerProcess<Ready extends { url: string } = { url: string }>(
  name: string,
  file: string,
  { cpu = SERVER_CPU, nodeArgs = [] }: { cpu?: string; nodeArgs?: string[] } = {},
): Promise<Ready & Endpoint> {
  const proc = start(name, process.execPath, [...nodeArgs, file], { cwd: BENCH_DIR, cpu, keepOutput: false });
  cleanupTasks.push(() => stop(proc.pid));
  const [line] = await proc.waitFor(/^\{"ready":true.*\}$/m, 60_000);
  return { ...(JSON.parse(line) as Ready), pid: proc.pid };
}

/**
 * The LLM scenario's provider (bench/lib/model-provider.ts). It runs on the load core: it stands for a
 * service on another machine, and Parley keeps the servers' core to itself, as in the other scenarios;
 * both sides of the comparison share the load core with it alike.
 */
const startModelProvider = () =>
  startServerProcess<ProviderReady>('model provider', path.join(BENCH_DIR, 'lib', 'model-provider.ts'), {
    cpu: LOAD_CPU,
    nodeArgs: ['--import', 'tsx'],
  });

async function installPeers(): Promise<boolean> {
  if (peersInstalled()) return true;
  if (quick) {
    note(
      'peers not installed (bench/node_modules is missing): the peer runs are skipped; `npm run bench` installs them',
    );
    return false;
  }
  const lock = existsSync(path.join(BENCH_DIR, 'package-lock.json'));
  log(`installing the peers: npm ${lock ? 'ci' : 'install'} in bench/ (once)`);
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn('npm', [lock ? 'ci' : 'install', '--no-audit', '--no-fund'], {
      cwd: BENCH_DIR,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, npm_config_yes: 'true' },
    });
    child.on('exit', resolve);
    child.on('error', () => resolve(1));
  });
  if (code !== 0 || !peersInstalled()) {
    note(`installing the peers failed (npm exited ${code}): the peer runs are skipped`);
    return false;
  }
  return true;
}

/** Runs a job of bench/load.ts and adds the CPU share the system under test (its processes `pids`) used meanwhile. */
function measured<T extends RunResult | HeldRunResult = RunResult>(pids: number[], job: Job): Promise<T> {
  return measuredOn<Job, JobResult, T>(load, pids, job);
}

/** Runs a job on a load process and adds the CPU shares of `pids` and of the load process meanwhile. */
async function measuredOn<J, R, T extends R & { serverCores?: number; loadCores?: number }>(
  jobs: JobProcess<J, R>,
  pids: number[],
  job: J,
): Promise<T> {
  const cpu = () => pids.reduce((sum, pid) => sum + (cpuMs(pid) || 0), 0);
  const before = cpu();
  const started = performance.now();
  const loadBefore = cpuMs(jobs.proc.pid);
  const result = await jobs.run<T>(job);
  const wall = performance.now() - started;
  return {
    ...result,
    serverCores: (cpu() - before) / wall,
    loadCores: (cpuMs(jobs.proc.pid) - loadBefore) / wall,
  };
}

/** The route pattern /metrics labels the Chat API's createMessage with: its mount and its path. */
const CREATE_MESSAGE_ROUTE = `${APIS.chat.prefix}${specOf(APIS.chat.operations, 'createMessage').path}`;
/** The same of the Runtime API's callAction. */
const CALL_ACTION_ROUTE = `${APIS.runtime.prefix}${specOf(APIS.runtime.operations, 'callAction').path}`;

/** The answers a run is counted in: one route's responses of one status. */
interface CountedRequests {
  route: string;
  status: number;
}

/** The counters of a Parley server's /metrics that a request's cost is counted in. */
async function costCounters(
  url: string,
  counted: CountedRequests,
): Promise<{ messages: number; statements: number; commits: number; sandboxCalls: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (pattern: RegExp) =>
    [...text.matchAll(pattern)].reduce((sum, match) => sum + Number(match[1] ?? 0), 0);
  return {
    messages: value(
      new RegExp(
        `^parley_http_request_duration_seconds_count\\{method="POST",route="${counted.route}",status="${counted.status}"\\} (\\S+)$`,
        'gm',
      ),
    ),
    statements: value(/^parley_sql_statements_total (\S+)$/gm),
    commits: value(/^parley_sql_commits_total (\S+)$/gm),
    sandboxCalls: value(/^parley_sandbox_calls_total (\S+)$/gm),
  };
}

type CostCounters = Awaited<ReturnType<typeof costCounters>>;

/** What each request counted between two readings of the counters cost the store; none when none was. */
function storeCostPerRequest(
  before: CostCounters,
  after: CostCounters,
): Pick<MessageCost, 'messages' | 'statements' | 'commits' | 'sandboxCalls'> | undefined {
  const messages = after.messages - before.messages;
  if (messages <= 0) return undefined;
  const per = (key: 'statements' | 'commits' | 'sandboxCalls') =>
    round((after[key] - before[key]) / messages);
  return {
    messages,
    statements: per('statements'),
    commits: per('commits'),
    sandboxCalls: per('sandboxCalls'),
  };
}

/**
 * A Parley run, with what each counted request (a chat message, an action call) cost the server:
 * statements, commits, sandbox calls, CPU.
 */
async function measuredCost(
  server: ParleyServer,
  job: Job,
  counted: CountedRequests = { route: CREATE_MESSAGE_ROUTE, status: 201 },
): Promise<RunResult> {
  const sandboxes = () => server.pids().filter((pid) => pid !== server.proc.pid);
  const cpu = (pids: number[]) => pids.reduce((sum, pid) => sum + (cpuMs(pid) || 0), 0);
  const before = await costCounters(server.url, counted);
  const cpuBefore = cpu(server.pids());
  const sandboxBefore = cpu(sandboxes());
  const result = await measured(server.pids(), job);
  const cpuSpent = cpu(server.pids()) - cpuBefore;
  const sandboxSpent = cpu(sandboxes()) - sandboxBefore;
  const store = storeCostPerRequest(before, await costCounters(server.url, counted));
  if (!store) return result;
  return {
    ...result,
    cost: {
      ...store,
      cpuMicros: Math.round((cpuSpent * 1000) / store.messages),
      sandboxCpuMicros: Math.round((sandboxSpent * 1000) / store.messages),
    },
  };
}

async function chatScenario(
  store: StoreName,
  server: ParleyServer,
  chatUrl: string,
  peers: Peers,
): Promise<void> {
  // Parley twice, its listeners on SSE then on WebSocket, in the same rounds as the peers.
  const systems: {
    /** The runs' key (the peers' is their system). */
    key: string;
    name: string;
    system: 'parley' | 'botkit' | 'directline';
    listen?: ListenProtocol;
    url: string;
    pids: () => number[];
  }[] = (['sse', 'websocket'] as const).map((listen) => ({
    key: `parley-${listen}`,
    name: 'Parley',
    system: 'parley',
    listen,
    url: chatUrl,
    pids: () => server.pids(),
  }));
  if (peers.botkit) {
    const { url, pid } = peers.botkit;
    systems.push({ key: 'botkit', name: 'Botkit 4 (websocket)', system: 'botkit', url, pids: () => [pid] });
  }
  if (peers.directline) {
    const { url, pid } = peers.directline;
    systems.push({
      key: 'directline',
      name: 'Bot Framework (Direct Line, polling)',
      system: 'directline',
      url,
      pids: () => [pid],
    });
  }
  const label = (s: (typeof systems)[number]) =>
    s.listen === 'websocket' ? `${s.name} (WebSocket)` : s.name;
  for (const conversations of plan.conversations) {
    const runs = new Map<string, RunResult[]>(systems.map((s) => [s.key, []]));
    for (let round = 0; round < plan.rounds; round++) {
      for (const s of rotate(systems, round)) {
        const job: Job = {
          kind: 'chat',
          system: s.system,
          ...(s.listen && { listen: s.listen }),
          url: s.url,
          conversations,
          pollMs: 5,
          ...plan.chat,
        };
        const result =
          s.system === 'parley' ? await measuredCost(server, job) : await measured(s.pids(), job);
        checkRun(`chat ${label(s)} C=${conversations} (${store})`, result);
        runs.get(s.key)?.push(result);
        log(
          `chat C=${conversations} ${store} ${label(s)}: ${result.rate.toFixed(0)} msg/s, p50 ${result.latency.p50.toFixed(2)} ms, p99 ${result.latency.p99.toFixed(2)} ms, server ${(result.serverCores ?? 0).toFixed(2)} cores, load ${(result.loadCores ?? 0).toFixed(2)}${result.cost ? `; per message ${costText(result.cost)}` : ''}`,
        );
        await sleep(200);
      }
    }
    const peerSystems = systems.filter((o) => o.system !== 'parley');
    for (const s of systems) {
      const mine = runs.get(s.key) ?? [];
      chatSeries.push({
        scenario: withProtocol(
          `chat round trip, ${conversations} conversation${conversations === 1 ? '' : 's'}`,
          s.listen,
        ),
        conversations,
        ...(s.listen && { listen: s.listen }),
        store,
        system: s.name,
        runs: mine,
        median: mediansOf(mine),
        ...(s.system === 'parley' && { cost: medianCost(mine) }),
        ...(s.system === 'parley' && {
          ratio: Object.fromEntries(
            peerSystems.map((o) => [o.system, pairedRatio(mine, runs.get(o.key) ?? [])]),
          ),
        }),
      });
    }
  }
}

async function actionScenario(
  store: StoreName,
  server: ParleyServer,
  bots: { cached: { botId: string; key: string }; uncached: { botId: string; key: string } },
  ceiling: Endpoint,
): Promise<void> {
  // A check first: the cacheable action answers from its cache the second time.
  const conn = HttpConnection.of(server.url);
  const auth = (b: { botId: string; key: string }) =>
    Object.entries(botHeadersOf(b.botId, b.key))
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
  const check = rawCall(mountOf(APIS.runtime), APIS.runtime.operations, 'callAction', {
    type: 'textStats',
    input: { text: 'check the cache' },
  });
  for (let i = 0; i < 2; i++) {
    const answer = await conn.json(check.method, check.path, auth(bots.cached), check.body);
    const cached = (answer.json as { meta?: { cached?: boolean } }).meta?.cached;
    if (answer.status !== 200 || cached !== (i === 1)) {
      throw new Error(`the action call answered ${answer.status} ${answer.body.toString()} (call ${i + 1})`);
    }
  }
  conn.close();

  const parleyPids = () => server.pids();
  // The load generator writes each call's body: only the path is the operation's.
  const actionPath = pathOf(mountOf(APIS.runtime), APIS.runtime.operations, 'callAction', {});
  const ceilingName = 'node:http JSON echo (ceiling)';
  const systems = [
    {
      name: 'Parley, sandboxed action',
      url: `${server.url}${actionPath}`,
      bot: bots.uncached,
      input: 'unique' as const,
      pids: parleyPids,
      parley: true,
    },
    {
      name: 'Parley, cached action',
      url: `${server.url}${actionPath}`,
      bot: bots.cached,
      input: 'fixed' as const,
      pids: parleyPids,
      parley: true,
    },
    {
      name: ceilingName,
      url: `${ceiling.url}${actionPath}`,
      bot: bots.uncached,
      input: 'unique' as const,
      pids: () => [ceiling.pid],
      parley: false,
    },
  ];
  const runs = new Map<string, RunResult[]>(systems.map((s) => [s.name, []]));
  for (let round = 0; round < plan.actionRounds; round++) {
    for (const s of rotate(systems, round)) {
      const job: Job = {
        kind: 'http',
        url: s.url,
        headers: { authorization: `Bearer ${s.bot.key}`, 'x-bot-id': s.bot.botId },
        actionType: 'textStats',
        input: s.input,
        concurrency: plan.actionConcurrency,
        expectStatus: 200,
        ...plan.action,
      };
      const result = s.parley
        ? await measuredCost(server, job, { route: CALL_ACTION_ROUTE, status: 200 })
        : await measured(s.pids(), job);
      checkRun(`action ${s.name} (${store})`, result);
      runs.get(s.name)?.push(result);
      log(
        `action ${store} ${s.name}: ${result.rate.toFixed(0)} req/s, p50 ${result.latency.p50.toFixed(2)} ms, p99 ${result.latency.p99.toFixed(2)} ms, server ${(result.serverCores ?? 0).toFixed(2)} cores, load ${(result.loadCores ?? 0).toFixed(2)}; per call ${callCostText(result.cost, cpuMicrosPerCall(result))}`,
      );
      await sleep(200);
    }
  }
  const ceilingRuns = runs.get(ceilingName) ?? [];
  for (const s of systems) {
    const mine = runs.get(s.name) ?? [];
    actionSeries.push({
      scenario: `action call (${plan.actionConcurrency} connections)`,
      store,
      system: s.name,
      runs: mine,
      median: mediansOf(mine),
      ...(s.name !== ceilingName && { ratioToCeiling: pairedRatio(mine, ceilingRuns) }),
      cpuMicros: median(mine.map(cpuMicrosPerCall)),
      ...(s.parley && { cost: medianCost(mine) }),
    });
  }
}

// ---------------------------------------------------------------------------------------------------
// Search: searchFiles over a knowledge base of SEARCH_DOCUMENTS × SEARCH_SECTIONS × 2 passages.

const SEARCH_DOCUMENTS = 40;
const SEARCH_SECTIONS = 25;
const SEARCH_CONCURRENCY = 8;

/** A vocabulary of 1,200 made-up words, drawn with a skew (a few common, many rare), like a real text's. */
function vocabulary(random: () => number): { word(): string; words: string[] } {
  const syllables = [
    'ka',
    'lo',
    'mi',
    'ren',
    'tu',
    'sa',
    'vor',
    'el',
    'di',
    'pan',
    'gri',
    'os',
    'be',
    'nal',
    'chu',
    'fi',
  ];
  const words = new Set<string>();
  while (words.size < 1200) {
    const n = 2 + Math.floor(random() * 3);
    words.add(Array.from({ length: n }, () => syllables[Math.floor(random() * syllables.length)]).join(''));
  }
  const list = [...words];
  return { words: list, word: () => list[Math.floor(list.length * random() ** 2.5)] as string };
}

/**
 * A request to the server under test, JSON in and out (a string body is sent as it is); anything but a
 * 2xx throws, naming the request and the answer.
 */
function serverCall(server: ParleyServer) {
  return async <T>(
    method: string,
    route: string,
    headers: Record<string, string>,
    body?: unknown,
  ): Promise<T> => {
    const res = await fetch(`${server.url}${route}`, {
      method,
      headers: { ...headers, ...(body !== undefined && { 'content-type': 'application/json' }) },
      ...(body !== undefined && { body: typeof body === 'string' ? body : JSON.stringify(body) }),
    });
    const text = await res.text();
    if (!res.ok) {
      const sent = typeof body === 'string' ? body : JSON.stringify(body ?? '');
      throw new Error(`${method} ${route} ${sent.slice(0, 300)} answered ${res.status}: ${text}`);
    }
    return (text ? JSON.parse(text) : {}) as T;
  };
}

async function searchScenario(store: StoreName, server: ParleyServer): Promise<void> {
  const random = seeded(13);
  const vocab = vocabulary(random);
  const call = serverCall(server);
  const { bot } = await ownerAdmin(server).createBot({ name: 'search-bench' });
  const botHeaders = botHeadersOf(bot.id, await botApiKey(server, bot.id));
  const files = filesApi(server.url, botHeaders);
  const { knowledgeBase } = await files.createKnowledgeBase({ name: 'bench' });
  const sentence = () => {
    const words = Array.from({ length: 8 + Math.floor(random() * 10) }, () => vocab.word());
    return `${words.join(' ')}.`;
  };
  const started = performance.now();
  const ids: string[] = [];
  for (let d = 0; d < SEARCH_DOCUMENTS; d++) {
    const sections = Array.from(
      { length: SEARCH_SECTIONS },
      (_, i) => `## ${vocab.word()} ${vocab.word()} ${i}\n\n${sentence()} ${sentence()} ${sentence()}`,
    );
    const content = `${sections.join('\n\n')}\n`;
    const { file } = await files.upsertFile({
      key: `doc-${d}.md`,
      size: Buffer.byteLength(content),
      index: true,
      tags: { source: 'knowledge-base', kbId: knowledgeBase.id },
    });
    await call(
      'PUT',
      new URL(file.uploadUrl).pathname + new URL(file.uploadUrl).search,
      { 'content-type': 'text/markdown' },
      content,
    );
    ids.push(file.id);
  }
  let passages = 0;
  for (const id of ids) {
    for (;;) {
      const { file } = await files.getFile({ id });
      if (file.status === 'indexing_completed') break;
      if (file.status.endsWith('failed')) throw new Error(`file ${id} ended ${file.status}`);
      await sleep(100);
    }
    passages += (await collect(files.listFilePassages, 'passages', { id, pageSize: PAGE_SIZE_MAX })).items
      .length;
  }
  log(
    `search ${store}: ${SEARCH_DOCUMENTS} documents uploaded and indexed into ${passages} passages in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );
  const gets = Array.from({ length: 200 }, () => {
    const query = Array.from({ length: 2 + Math.floor(random() * 3) }, () => vocab.word()).join(' ');
    return pathOf(mountOf(APIS.files), APIS.files.operations, 'searchFiles', {
      query,
      tags: { kbId: knowledgeBase.id },
      limit: 10,
    });
  });
  const runs: RunResult[] = [];
  for (let round = 0; round < plan.actionRounds; round++) {
    const result = await measured(server.pids(), {
      kind: 'http',
      url: server.url,
      headers: botHeaders,
      gets,
      actionType: '',
      input: 'fixed',
      concurrency: SEARCH_CONCURRENCY,
      expectStatus: 200,
      ...plan.action,
    });
    checkRun(`search (${store})`, result);
    runs.push(result);
    log(
      `search ${store}: ${result.rate.toFixed(0)} queries/s, p50 ${result.latency.p50.toFixed(2)} ms, p99 ${result.latency.p99.toFixed(2)} ms, server ${(result.serverCores ?? 0).toFixed(2)} cores`,
    );
  }
  searchSeries.push({
    scenario: `searchFiles, ${passages.toLocaleString('en-US')} passages (${SEARCH_CONCURRENCY} connections)`,
    store,
    system: store === 'sqlite' ? 'Parley: FTS5, BM25' : 'Parley: tsvector, ts_rank_cd',
    runs,
    median: mediansOf(runs),
    passages,
  });
}

// ---------------------------------------------------------------------------------------------------
// Retrieval: how well and how fast searchFiles finds the passages that answer known questions, ranked
// by words (BM25), by meaning (the vectors) and both fused (hybrid, the default): servers started one
// after another on the same data, with PARLEY_SEARCH_RANKING set to each. The corpus and its questions
// come from bench/lib/retrieval-corpus.ts, the embedding model is the bench provider's (the tests'
// deterministic embedder with the corpus's synonyms). The questions' documents come first (2,000
// passages); filler documents then grow the corpus to each size of plan.retrieval.passages, uploaded
// through the Files API as a bot would, and every question is asked again among them.

const RANKINGS: { ranking: SearchRanking; system: string; index: VectorIndexChoice }[] = [
  { ranking: 'words', system: 'BM25 alone', index: 'auto' },
  { ranking: 'meaning', system: 'vectors alone', index: 'auto' },
  // The same, every vector compared (PARLEY_VECTOR_INDEX=exact): what the index's recall@10 is measured against.
  { ranking: 'meaning', system: 'vectors alone, exact scan', index: 'exact' },
  { ranking: 'hybrid', system: 'hybrid (convex combination)', index: 'auto' },
];
/** Questions of each set the exact scan is asked past the first size (a scan of 100,000 takes seconds). */
const EXACT_QUESTIONS_LARGE = 25;
/** Filler documents are uploaded this many generated documents to a file (fewer, larger uploads). */
const FILLER_DOCUMENTS_PER_FILE = 20;

interface RetrievalFigure {
  store: StoreName;
  passages: number;
  /** Questions asked of each set. */
  questions: number;
  ranking: SearchRanking;
  system: string;
  literal: { recall: number; mrr: number };
  paraphrase: { recall: number; mrr: number };
  /** searchFiles round trips over both sets of questions, one at a time. */
  latency: Latency;
  /**
   * The vector index's recall@10 against the exact scan (vectors alone): of each question's exact top 10,
   * the share the index's top 10 holds, over the questions both were asked.
   */
  indexRecall?: number;
}
const retrievalFigures: RetrievalFigure[] = [];

async function retrievalScenario(store: StoreName, provider: ProviderReady): Promise<void> {
  const corpus = benchCorpus();
  const data = await parleyData(store);
  cleanupTasks.push(() => data.remove());
  const serve = (ranking: SearchRanking, index: VectorIndexChoice) =>
    startParley(
      store,
      [],
      {
        ...llmSettings(provider),
        PARLEY_EMBEDDINGS_MODEL: provider.embeddingModel,
        PARLEY_SEARCH_RANKING: ranking,
        PARLEY_VECTOR_INDEX: index,
      },
      data,
    );
  try {
    let current: { ranking: SearchRanking; index: VectorIndexChoice } = { ranking: 'hybrid', index: 'auto' };
    let server = await serve(current.ranking, current.index);
    const { bot } = await ownerAdmin(server).createBot({ name: 'retrieval-bench' });
    const key = await botApiKey(server, bot.id);
    let client = botClient(server.url, bot.id, key);
    const { knowledgeBase } = await client.createKnowledgeBase({ name: 'retrieval' });
    let documents = 0;
    for (const size of plan.retrieval.passages) {
      const started = performance.now();
      if (documents === 0) {
        await upload(client, knowledgeBase.id, corpus.documents(0, RETRIEVAL_QUESTION_DOCUMENTS));
        documents = RETRIEVAL_QUESTION_DOCUMENTS;
      }
      while (documents * PASSAGES_PER_DOCUMENT < size) {
        const count = Math.min(FILLER_DOCUMENTS_PER_FILE, size / PASSAGES_PER_DOCUMENT - documents);
        const part = corpus.documents(documents, count);
        await upload(client, knowledgeBase.id, [
          { key: `filler-${documents}.md`, content: part.map((d) => d.content).join('\n') },
        ]);
        documents += count;
      }
      await untilEmbedded(data, size, 30 * 60_000, (state) => log(`retrieval ${store}: ${state}`));
      log(
        `retrieval ${store}: ${num(size)} passages indexed and embedded (${((performance.now() - started) / 1000).toFixed(1)} s)`,
      );
      /** Each question's answers by meaning (index, exact), to compare their top 10. */
      const byMeaning = new Map<VectorIndexChoice, { key: string; paragraph: number }[][]>();
      for (const { ranking, system, index } of RANKINGS) {
        if (ranking !== current.ranking || index !== current.index) {
          await server.stop();
          server = await serve(ranking, index);
          current = { ranking, index };
          client = botClient(server.url, bot.id, key);
        }
        const first = size === plan.retrieval.passages[0];
        const exact = index === 'exact';
        // A first pass warms the server's caches and the driver's statements up; the second is measured.
        if (!exact || first)
          await ask(client, knowledgeBase.id, [...corpus.literal, ...corpus.paraphrase].slice(0, 40));
        // Past the first size, fewer questions of each set: an exact scan of 100,000 vectors is slow.
        const asked = first
          ? RETRIEVAL_QUESTIONS
          : Math.min(plan.retrieval.largeQuestions, exact ? EXACT_QUESTIONS_LARGE : Infinity);
        const literal = await ask(client, knowledgeBase.id, corpus.literal.slice(0, asked));
        const paraphrase = await ask(client, knowledgeBase.id, corpus.paraphrase.slice(0, asked));
        if (ranking === 'meaning') byMeaning.set(index, [...literal.answers, ...paraphrase.answers]);
        const figure: RetrievalFigure = {
          store,
          passages: size,
          questions: asked,
          ranking,
          system,
          literal: { recall: round(literal.recall), mrr: round(literal.mrr) },
          paraphrase: { recall: round(paraphrase.recall), mrr: round(paraphrase.mrr) },
          latency: summarize([...literal.timesMs, ...paraphrase.timesMs]),
        };
        if (exact) {
          // The exact scan's questions: the first `asked` of each set, as the index's were.
          const indexed = byMeaning.get('auto') ?? [];
          const perSet = indexed.length / 2;
          const same = [...indexed.slice(0, asked), ...indexed.slice(perSet, perSet + asked)];
          figure.indexRecall = round(recallOf(same, byMeaning.get('exact') ?? [], ANSWERS));
        }
        retrievalFigures.push(figure);
        log(
          `retrieval ${store} ${num(size)} ${system}: literal recall@${RECALL_AT} ${figure.literal.recall} MRR ${figure.literal.mrr}, paraphrase recall@${RECALL_AT} ${figure.paraphrase.recall} MRR ${figure.paraphrase.mrr}, p50 ${ms(figure.latency.p50)} ms p99 ${ms(figure.latency.p99)} ms${figure.indexRecall === undefined ? '' : `, index recall@${ANSWERS} vs exact ${figure.indexRecall}`}`,
        );
      }
      // The next size is loaded with the default ranking (the order of RANKINGS ends with it).
    }
    await server.stop();
  } finally {
    await data.remove();
  }
}

/** Issue 33's targets: hybrid at least as good as BM25 on each set, better on paraphrases; p99 < 50 ms at 100,000. */
function retrievalTargets(): void {
  for (const hybrid of retrievalFigures.filter((f) => f.ranking === 'hybrid')) {
    const words = retrievalFigures.find(
      (f) => f.ranking === 'words' && f.store === hybrid.store && f.passages === hybrid.passages,
    );
    const at = `${num(hybrid.passages)} passages`;
    if (words) {
      targets.push({
        name: `retrieval, ${at}: hybrid recall@${RECALL_AT} vs BM25 (literal, paraphrase)`,
        store: hybrid.store,
        value: `${hybrid.literal.recall} vs ${words.literal.recall}, ${hybrid.paraphrase.recall} vs ${words.paraphrase.recall}`,
        target: '≥ on literal, > on paraphrase',
        met:
          hybrid.literal.recall >= words.literal.recall && hybrid.paraphrase.recall > words.paraphrase.recall,
      });
    }
    const exact = retrievalFigures.find(
      (f) => f.indexRecall !== undefined && f.store === hybrid.store && f.passages === hybrid.passages,
    );
    if (exact?.indexRecall !== undefined) {
      targets.push({
        name: `retrieval, ${at}: vector index recall@${ANSWERS} vs the exact scan`,
        store: hybrid.store,
        value: String(exact.indexRecall),
        target: '≥ 0.95',
        met: exact.indexRecall >= 0.95,
      });
    }
    if (hybrid.passages >= 100_000) {
      targets.push({
        name: `retrieval, ${at}: hybrid searchFiles p99`,
        store: hybrid.store,
        value: `${ms(hybrid.latency.p99)} ms`,
        target: '< 50 ms',
        met: hybrid.latency.p99 < 50,
      });
    }
  }
}

function retrievalTable(): string {
  const head = `| store | passages (questions a set) | ranking | literal recall@${RECALL_AT} | literal MRR | paraphrase recall@${RECALL_AT} | paraphrase MRR | p50 ms | p99 ms | index recall@${ANSWERS} vs exact |`;
  const rule = '| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |';
  const rows = retrievalFigures.map(
    (f) =>
      `| ${f.store} | ${num(f.passages)} (${f.questions}) | ${f.system} | ${f.literal.recall} | ${f.literal.mrr} | ${f.paraphrase.recall} | ${f.paraphrase.mrr} | ${ms(f.latency.p50)} | ${ms(f.latency.p99)} | ${f.indexRecall ?? ''} |`,
  );
  return [head, rule, ...rows].join('\n');
}

// ---------------------------------------------------------------------------------------------------
// Tables: a table of plan.tables.rows orders, loaded 1,000 rows a call; findTableRows on an indexed
// equality (a customer's orders) with TABLES_CONCURRENCY requests in flight; 1,000-row upsertTableRows
// on the key column (half existing orders, half new), one call at a time. The measured requests come
// from bench/lib/tables-load.ts, a process of its own on the load core, as the other scenarios' do.

const TABLES_NAME = 'BenchOrdersTable';
const TABLES_BATCH = 1000;
const TABLES_CONCURRENCY = 16;
const TABLES_CUSTOMERS = 5000;
const TABLES_STATUSES = [
  'pending',
  'paid',
  'packed',
  'shipped',
  'in_transit',
  'delivered',
  'cancelled',
  'refunded',
  'returned',
  'on_hold',
];

/** An order's key: `ORD-0000001`. */
const orderId = (n: number) => `ORD-${String(n).padStart(7, '0')}`;

/** One order, drawn from `random`: a status among 10, a customer among TABLES_CUSTOMERS, 1 to 4 items. */
function orderRow(random: () => number, n: number): Record<string, unknown> {
  const pick = <T>(list: T[]) => list[Math.floor(random() * list.length)] as T;
  const items = Array.from({ length: 1 + Math.floor(random() * 4) }, () => ({
    sku: `SKU-${String(Math.floor(random() * 2000)).padStart(4, '0')}`,
    quantity: 1 + Math.floor(random() * 5),
    price: Math.round(100 + random() * 9900) / 100,
  }));
  return {
    orderId: orderId(n),
    status: pick(TABLES_STATUSES),
    customer: `customer-${String(Math.floor(random() * TABLES_CUSTOMERS)).padStart(4, '0')}`,
    total: Math.round(items.reduce((sum, i) => sum + i.quantity * i.price, 0) * 100) / 100,
    placedAt: new Date(Date.UTC(2024, 0, 1) + Math.floor(random() * 366 * 86_400_000)).toISOString(),
    items,
  };
}

async function tablesScenario(store: StoreName, server: ParleyServer): Promise<void> {
  const random = seeded(29);
  const { rows: total, finds, findWarmup, upserts, upsertWarmup } = plan.tables;
  const call = serverCall(server);
  const { bot } = await ownerAdmin(server).createBot({ name: 'tables-bench' });
  const botHeaders = botHeadersOf(bot.id, await botApiKey(server, bot.id));
  const tables = tablesApi(server.url, botHeaders);
  /** The path of a Tables API operation on the bench's table, whose body the bench writes itself. */
  const tablePath = (id: 'createTableRows' | 'findTableRows' | 'upsertTableRows') =>
    pathOf(mountOf(APIS.tables), APIS.tables.operations, id, { table: TABLES_NAME });
  const { table } = await tables.createTable({
    name: TABLES_NAME,
    keyColumn: 'orderId',
    schema: {
      type: 'object',
      properties: {
        orderId: { type: 'string' },
        status: { type: 'string' },
        customer: { type: 'string' },
        total: { type: 'number' },
        placedAt: { type: 'string', format: 'date-time' },
        items: { type: 'array', items: { type: 'object' } },
      },
    },
  });
  if (table.keyColumn !== 'orderId')
    throw new Error(`createTable answered keyColumn ${JSON.stringify(table.keyColumn)}, not "orderId"`);

  // The load, one call at a time, each batch timed.
  const customers = new Set<string>();
  const batchMs: number[] = [];
  const serverCpu = () => server.pids().reduce((sum, pid) => sum + (cpuMs(pid) || 0), 0);
  const cpuBefore = serverCpu();
  const loadStarted = performance.now();
  for (let first = 1; first <= total; first += TABLES_BATCH) {
    const rows = Array.from({ length: Math.min(TABLES_BATCH, total - first + 1) }, (_, i) => {
      const row = orderRow(random, first + i);
      customers.add(row.customer as string);
      return row;
    });
    const body = JSON.stringify({ rows });
    const started = performance.now();
    // The body is written before the clock starts: the call is timed, not its JSON.
    const answer = await call<{ rows: unknown[]; errors?: string[] }>(
      'POST',
      tablePath('createTableRows'),
      botHeaders,
      body,
    );
    batchMs.push(performance.now() - started);
    if (answer.errors?.length || answer.rows.length !== rows.length)
      throw new Error(
        `createTableRows (rows ${first}–${first + rows.length - 1}) wrote ${answer.rows.length} rows: ${(answer.errors ?? []).slice(0, 3).join('; ')}`,
      );
  }
  const loadMs = performance.now() - loadStarted;
  const loadRun: RunResult = {
    measured: batchMs.length,
    errors: 0,
    windowMs: loadMs,
    rate: (batchMs.length / loadMs) * 1000,
    latency: summarize(batchMs),
    serverCores: (serverCpu() - cpuBefore) / loadMs,
  };
  log(
    `tables ${store}: ${num(total)} rows loaded in ${(loadMs / 1000).toFixed(1)} s, ${num((total / loadMs) * 1000)} rows/s, p50 ${ms(loadRun.latency.p50)} ms, p99 ${ms(loadRun.latency.p99)} ms per ${num(TABLES_BATCH)}-row call, server ${(loadRun.serverCores ?? 0).toFixed(2)} cores (informational)`,
  );
  tablesSeries.push({
    scenario: `createTableRows, ${num(total)} rows in calls of ${num(TABLES_BATCH)}, one at a time (load)`,
    store,
    system: 'Parley (informational)',
    runs: [loadRun],
    median: mediansOf([loadRun]),
    unit: 'rows/s',
    rowsPerCall: TABLES_BATCH,
    tableRows: 0,
  });

  const tablesLoad = await JobProcess.start<TablesLoadJob, RunResult>(
    'tables load generator',
    path.join(BENCH_DIR, 'lib', 'tables-load.ts'),
    ROOT,
  );
  cleanupTasks.push(() => stop(tablesLoad.proc.pid));
  const measuredTables = (job: TablesLoadJob) => measuredOn(tablesLoad, server.pids(), job);
  try {
    // findTableRows: a customer's orders, each request another customer that has some.
    const known = [...customers];
    const runs: RunResult[] = [];
    for (let round = 0; round < plan.actionRounds; round++) {
      const bodies = Array.from({ length: findWarmup + finds }, () =>
        JSON.stringify({
          filter: { customer: known[Math.floor(random() * known.length)] },
          limit: 20,
        }),
      );
      const result = await measuredTables({
        url: `${server.url}${tablePath('findTableRows')}`,
        headers: botHeaders,
        bodies,
        warmup: findWarmup,
        concurrency: TABLES_CONCURRENCY,
        expect: { kind: 'found' },
      });
      checkRun(`tables find (${store})`, result);
      runs.push(result);
      log(
        `tables ${store} findTableRows: ${result.rate.toFixed(0)} req/s, p50 ${ms(result.latency.p50)} ms, p99 ${ms(result.latency.p99)} ms, server ${(result.serverCores ?? 0).toFixed(2)} cores, load ${(result.loadCores ?? 0).toFixed(2)}`,
      );
      await sleep(200);
    }
    tablesSeries.push({
      scenario: `findTableRows, customer equality, limit 20, ${num(total)} rows (${TABLES_CONCURRENCY} in flight)`,
      store,
      system: 'Parley: indexed column',
      runs,
      median: mediansOf(runs),
      unit: 'req/s',
      tableRows: total,
    });

    // upsertTableRows on the key column, one call at a time: 500 orders of the load (other ones each
    // call) rewritten, 500 new ones.
    const half = TABLES_BATCH / 2;
    let fresh = total;
    const bodies = Array.from({ length: upsertWarmup + upserts }, () => {
      const existing = new Set<number>();
      while (existing.size < half) existing.add(1 + Math.floor(random() * total));
      const rows = [
        ...[...existing].map((n) => orderRow(random, n)),
        ...Array.from({ length: half }, () => orderRow(random, ++fresh)),
      ];
      return JSON.stringify({ rows, keyColumn: 'orderId' });
    });
    const upsert = await measuredTables({
      url: `${server.url}${tablePath('upsertTableRows')}`,
      headers: botHeaders,
      bodies,
      warmup: upsertWarmup,
      concurrency: 1,
      expect: { kind: 'upserted', inserted: half, updated: half },
    });
    checkRun(`tables upsert (${store})`, upsert);
    log(
      `tables ${store} upsertTableRows: ${upsert.rate.toFixed(1)} calls/s, ${num(upsert.rate * TABLES_BATCH)} rows/s, p50 ${ms(upsert.latency.p50)} ms, p99 ${ms(upsert.latency.p99)} ms per call, server ${(upsert.serverCores ?? 0).toFixed(2)} cores`,
    );
    tablesSeries.push({
      scenario: `upsertTableRows, ${num(TABLES_BATCH)} rows a call (${num(half)} new) on keyColumn, one at a time`,
      store,
      system: 'Parley: key column',
      runs: [upsert],
      median: mediansOf([upsert]),
      unit: 'calls/s',
      rowsPerCall: TABLES_BATCH,
      tableRows: total,
    });
    const after = await tables.getTable({ table: TABLES_NAME });
    if (after.rows !== fresh)
      throw new Error(`getTable counts ${after.rows} rows after the upserts, not ${fresh}`);
  } finally {
    await stop(tablesLoad.proc.pid);
  }
}

// ---------------------------------------------------------------------------------------------------
// LLM gateway: streamed completions asked of the provider directly and through Parley's Cognitive API,
// side by side: in each round both arms run the same number of streams at the same concurrency (the
// arm that goes first alternates), and the streams of the counted rounds are pooled per arm. What
// Parley adds is its arm's percentile minus the provider's, for the time to the first token and to the
// last byte. Parley is asked with `options.skipCache`: every stream reaches the provider.

interface LlmArmFigures {
  /** Streams answered in full over the counted rounds, and how many the arm finished per second. */
  streams: number;
  rate: number;
  ttft: Latency;
  total: Latency;
  /** From the last text to the last byte: what the end of a stream adds to its last token. */
  tail: Latency;
}
interface LlmRound {
  round: number;
  wire: LlmWire;
  errors: number;
  ttft: Latency;
  total: Latency;
  tail: Latency;
  /** Parley's processes, the load generator and the provider: CPU over the round's wall time. */
  serverCores: number;
  /** CPU time of Parley's processes over the streams answered in full: what a busy machine moves least. */
  serverCpuMsPerStream: number;
  loadCores: number;
  providerCores: number;
}
type Added = Omit<Figures, 'rate'>;
interface LlmFigure {
  store: StoreName;
  concurrency: number;
  /** Tokens per reply, one a chunk. */
  tokens: number;
  pacing: ProviderReady['pacing'];
  provider: LlmArmFigures;
  parley: LlmArmFigures;
  /** Parley's percentile minus the provider's. */
  added: { ttft: Added; total: Added };
  /** The medians over Parley's counted rounds of its processes' CPU share, and of their CPU a stream. */
  parleyCores: number;
  parleyCpuMsPerStream: number;
  /** Every round, the warm-up (round 0) included, in run order. */
  rounds: LlmRound[];
}
const llmFigures: LlmFigure[] = [];
/** Issue 31's target for what the gateway adds, to the first token and to the last byte alike. */
const LLM_ADDED_TARGET = { p50: 5, p99: 20 };

function addedBy(parley: Latency, provider: Latency): Added {
  return { p50: parley.p50 - provider.p50, p95: parley.p95 - provider.p95, p99: parley.p99 - provider.p99 };
}

async function llmScenario(
  store: StoreName,
  server: ParleyServer,
  provider: ProviderReady & Endpoint,
): Promise<void> {
  const { bot } = await ownerAdmin(server).createBot({ name: 'llm-bench' });
  const botHeaders = botHeadersOf(bot.id, await botApiKey(server, bot.id));
  const arms: (Pick<LlmStreamsJob, 'wire' | 'url' | 'headers' | 'model'> & { name: string })[] = [
    {
      wire: 'provider',
      name: 'provider alone',
      url: `${provider.url}/chat/completions`,
      headers: {},
      model: provider.models.best,
    },
    {
      wire: 'parley',
      name: 'through Parley',
      url: `${server.url}${mountOf(APIS.cognitive)}${generateTextStream.path}`,
      headers: botHeaders,
      model: 'best',
    },
  ];
  const llmLoad = await JobProcess.start<LlmStreamsJob, LlmStreamsResult>(
    'LLM load generator',
    path.join(BENCH_DIR, 'lib', 'llm-load.ts'),
    ROOT,
  );
  cleanupTasks.push(() => stop(llmLoad.proc.pid));
  const { firstTokenDelayMs, tokenDelayMs } = provider.pacing;
  const staggerMs = firstTokenDelayMs + REPLY_TOKENS * tokenDelayMs;
  let firstStream = 0;
  try {
    for (const concurrency of plan.llm.concurrency) {
      const streams = plan.llm.streams[concurrency] ?? concurrency;
      const pooled: Record<LlmWire, { ttft: number[]; total: number[]; tail: number[]; windowMs: number }> = {
        provider: { ttft: [], total: [], tail: [], windowMs: 0 },
        parley: { ttft: [], total: [], tail: [], windowMs: 0 },
      };
      const rounds: LlmRound[] = [];
      // Round 0 warms both arms up (connections, compiled code) and is not counted.
      for (let round = 0; round <= plan.llm.rounds; round++) {
        for (const arm of rotate(arms, round)) {
          const { name, ...job } = arm;
          const providerCpu = cpuMs(provider.pid);
          const started = performance.now();
          const result = await measuredOn(llmLoad, server.pids(), {
            ...job,
            streams,
            concurrency,
            staggerMs,
            firstStream,
          });
          const wallMs = performance.now() - started;
          const providerCores = (cpuMs(provider.pid) - providerCpu) / wallMs;
          firstStream += streams;
          const what = `llm C=${concurrency} ${store} ${name}${round === 0 ? ' (warm-up)' : ` round ${round}`}`;
          if (result.errors > 0)
            note(`${what}: ${result.errors} of ${streams} streams failed (first: ${result.firstError})`);
          if (result.ttftMs.length === 0)
            throw new Error(`${what}: no stream answered (${result.firstError})`);
          const ttft = summarize(result.ttftMs);
          const total = summarize(result.totalMs);
          const tail = summarize(result.tailMs);
          rounds.push({
            round,
            wire: arm.wire,
            errors: result.errors,
            ttft,
            total,
            tail,
            serverCores: result.serverCores ?? NaN,
            serverCpuMsPerStream: ((result.serverCores ?? NaN) * wallMs) / result.ttftMs.length,
            loadCores: result.loadCores ?? NaN,
            providerCores,
          });
          log(
            `${what}: first token p50 ${ms(ttft.p50)} ms p99 ${ms(ttft.p99)} ms, last byte p50 ${ms(total.p50)} ms p99 ${ms(total.p99)} ms (after the last text: p50 ${ms(tail.p50)} ms), Parley ${(result.serverCores ?? 0).toFixed(2)} cores (${rounds.at(-1)?.serverCpuMsPerStream.toFixed(2)} ms a stream), provider ${providerCores.toFixed(2)}, load ${(result.loadCores ?? 0).toFixed(2)}`,
          );
          if (round > 0) {
            const kept = pooled[arm.wire];
            kept.ttft.push(...result.ttftMs);
            kept.total.push(...result.totalMs);
            kept.tail.push(...result.tailMs);
            kept.windowMs += result.windowMs;
          }
          await sleep(200);
        }
      }
      const figures = (wire: LlmWire): LlmArmFigures => {
        const kept = pooled[wire];
        return {
          streams: kept.ttft.length,
          rate: (kept.ttft.length / kept.windowMs) * 1000,
          ttft: summarize(kept.ttft),
          total: summarize(kept.total),
          tail: summarize(kept.tail),
        };
      };
      const direct = figures('provider');
      const parley = figures('parley');
      llmFigures.push({
        store,
        concurrency,
        tokens: REPLY_TOKENS,
        pacing: provider.pacing,
        provider: direct,
        parley,
        added: { ttft: addedBy(parley.ttft, direct.ttft), total: addedBy(parley.total, direct.total) },
        parleyCores: median(
          rounds.filter((r) => r.round > 0 && r.wire === 'parley').map((r) => r.serverCores),
        ),
        parleyCpuMsPerStream: median(
          rounds.filter((r) => r.round > 0 && r.wire === 'parley').map((r) => r.serverCpuMsPerStream),
        ),
        rounds,
      });
    }
  } finally {
    await stop(llmLoad.proc.pid);
  }
}

function perDeliveryMedians(d: FanoutDeliverResult, which: 'message' | 'reply'): Omit<Figures, 'rate'> {
  return {
    p50: median(d.perDelivery.map((p) => p[which].p50)),
    p95: median(d.perDelivery.map((p) => p[which].p95)),
    p99: median(d.perDelivery.map((p) => p[which].p99)),
  };
}

function openFilesLimit(): number {
  const line = readFileSync('/proc/self/limits', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('Max open files'));
  const hard = line?.trim().split(/\s+/)[4];
  return hard === undefined || hard === 'unlimited' ? Infinity : Number(hard);
}

/** Sends that may be on the wire at once in the held load (each a connection of the load process). */
const HELD_CONNECTIONS = 256;

/**
 * Held load: conversations with their SSE listeners open, each sending to the echo bot every intervalMs
 * (open loop), on the server the chat ran on. One run per store.
 */
/** The first reply of an SDK bot just deployed (its process starts for it), per store. */
const sdkColdStarts: { store: StoreName; ms: number[] }[] = [];
let sdkBundle: Promise<string> | undefined;

/**
 * The echo bot of `bp init`, deployed as `bp deploy` uploads it, in a process of its own: the cold start
 * of its first message (a fresh bot each time), then the chat round trip at 16 conversations.
 */
async function sdkScenario(store: StoreName, server: ParleyServer): Promise<void> {
  const code = await (sdkBundle ??= buildSdkEchoBundle());
  log(`SDK echo bundle built with bp build (${(code.length / 1024).toFixed(0)} KB)`);
  const cold: number[] = [];
  for (let i = 0; i < 3; i++) {
    // From the deploy: a deploy starts the bot's process (to send it `register`), so its first message
    // may find it started or starting.
    const deployed = performance.now();
    const { chatUrl } = await deploySdkBundle(server, `sdk-echo-cold-${i}`, code);
    cold.push(await firstReplyMs(chatUrl, deployed));
  }
  sdkColdStarts.push({ store, ms: cold });
  log(`SDK bot cold start ${store}: ${cold.map((v) => v.toFixed(0)).join(', ')} ms`);
  const { chatUrl } = await deploySdkBundle(server, 'sdk-echo', code);
  const conversations = 16;
  const runs: RunResult[] = [];
  for (let round = 0; round < plan.rounds; round++) {
    const job: Job = {
      kind: 'chat',
      system: 'parley',
      listen: 'sse',
      url: chatUrl,
      conversations,
      pollMs: 5,
      ...plan.chat,
    };
    const result = await measuredCost(server, job);
    checkRun(`chat SDK bot C=${conversations} (${store})`, result);
    runs.push(result);
    log(
      `chat C=${conversations} ${store} SDK bot: ${result.rate.toFixed(0)} msg/s, p50 ${result.latency.p50.toFixed(2)} ms, p99 ${result.latency.p99.toFixed(2)} ms${result.cost ? `; per message ${costText(result.cost)}` : ''}`,
    );
  }
  chatSeries.push({
    scenario: `chat round trip, ${conversations} conversations`,
    conversations,
    store,
    system: 'Parley, SDK bot (bp deploy)',
    runs,
    median: mediansOf(runs),
    cost: medianCost(runs),
  });
}

/**
 * Sends one message to a bot through the Chat API and answers how long its first reply took to be
 * listed, from the message's sending or from `since`.
 */
async function firstReplyMs(chatUrl: string, since?: number): Promise<number> {
  const conn = HttpConnection.of(chatUrl);
  const base = new URL(chatUrl).pathname;
  try {
    const { userKey, conversationId } = await chatUserAndConversation(chatUrl, 'cold start', conn);
    const headers = `${HEADERS.userKey}: ${userKey}\r\n`;
    const started = since ?? performance.now();
    const send = rawCall(base, APIS.chat.operations, 'createMessage', {
      conversationId,
      payload: { type: 'text', text: 'hello' },
    });
    const list = rawCall(base, APIS.chat.operations, 'listMessages', { conversationId });
    const sent = await conn.json(send.method, send.path, headers, send.body);
    if (sent.status !== 201)
      throw new Error(`createMessage answered ${sent.status}: ${sent.body.toString()}`);
    for (;;) {
      const listed = await conn.json(list.method, list.path, headers);
      const messages = (listed.json as { messages?: { userId: string }[] }).messages ?? [];
      if (messages.length >= 2) return performance.now() - started;
      if (performance.now() - started > 60_000) throw new Error('the SDK bot did not answer within 60 s');
      await sleep(5);
    }
  } finally {
    conn.close();
  }
}

interface HeldPlan {
  conversations: number;
  intervalMs: number;
  warmupMs: number;
  durationMs: number;
  graceMs: number;
}

/**
 * The held load (bench/load.ts `held-run`) of `held.conversations` on the bot of `chatUrl`, each sending
 * every `held.intervalMs`; `what` names it in the log lines.
 */
async function runHeld(
  what: string,
  server: ParleyServer,
  chatUrl: string,
  held: HeldPlan,
): Promise<(HeldRunResult & { open: FanoutOpenResult }) | undefined> {
  const { intervalMs, warmupMs, durationMs, graceMs } = held;
  let conversations = held.conversations;
  // The load process holds a listener per conversation and the sends' connections; the server as many.
  const limit = openFilesLimit();
  if (limit < conversations + HELD_CONNECTIONS + 500) {
    conversations = Math.max(0, limit - HELD_CONNECTIONS - 500);
    note(`open files are limited to ${limit} here: ${what} with ${conversations} conversations`);
  }
  try {
    const open = await load.run<FanoutOpenResult>({ kind: 'held-open', chatUrl, conversations });
    if (open.failed > 0) note(`${what}: ${open.failed} conversations failed to open (${open.firstError})`);
    if (open.open === 0) throw new Error(`${what}: no conversation opened (${open.firstError})`);
    log(
      `${what}: ${open.open} conversations with their listeners open (${(open.openMs / 1000).toFixed(1)} s)`,
    );
    await sleep(1000);
    const result = await measured<HeldRunResult>(server.pids(), {
      kind: 'held-run',
      chatUrl,
      intervalMs,
      warmupMs,
      durationMs,
      graceMs,
      maxConnections: HELD_CONNECTIONS,
    });
    if (result.sendErrors > 0)
      note(`${what}: ${result.sendErrors} sends failed (first: ${result.firstError})`);
    if (result.missing > 0)
      note(
        `${what}: ${result.missing} of ${result.acknowledged} acknowledged messages without a reply after ${graceMs / 1000} s`,
      );
    if (result.unsent > 0 || result.hanging > 0)
      note(
        `${what}: ${result.unsent} sends never went out (all ${result.connections} connections busy) and ${result.hanging} requests had no answer after ${graceMs / 1000} s`,
      );
    log(
      `${what}: ${result.conversations} conversations, offered ${result.offeredRate.toFixed(0)} msg/s, ${result.rate.toFixed(0)} replies/s, p50 ${ms(result.latency.p50)} ms, p99 ${ms(result.latency.p99)} ms, ${result.missing} missing; requests answered (201 or 429) p50 ${ms(result.answerLatency.p50)} ms, p99 ${ms(result.answerLatency.p99)} ms, ${result.connectionWaits} waited for one of ${result.connections} send connections, server ${(result.serverCores ?? 0).toFixed(2)} cores, load ${(result.loadCores ?? 0).toFixed(2)}`,
    );
    return { ...result, open };
  } finally {
    await load.run({ kind: 'held-close' });
  }
}

/** A held load's run (`runHeld`), with what each acknowledged message cost the store. */
async function runHeldCounted(
  what: string,
  server: ParleyServer,
  chatUrl: string,
  held: HeldPlan,
): Promise<(HeldRunResult & HeldCost & { open: FanoutOpenResult }) | undefined> {
  const counted = { route: CREATE_MESSAGE_ROUTE, status: 201 };
  const before = await costCounters(server.url, counted);
  const result = await runHeld(what, server, chatUrl, held);
  const perMessage = storeCostPerRequest(before, await costCounters(server.url, counted));
  if (result && perMessage)
    log(
      `${what}: ${perMessage.statements} SQL and ${perMessage.commits} commits a message, ${num(((result.serverCores ?? 0) / result.rate) * 1e6)} µs of server CPU a reply (refusals included)`,
    );
  return result && { ...result, ...(perMessage && { perMessage }) };
}

/** What a held load's row says it cost: the store's statements and commits a message, the server's cores. */
function heldCostText(h: HeldRunResult & HeldCost): string {
  const store = h.perMessage
    ? `${h.perMessage.statements.toFixed(1)} SQL, ${h.perMessage.commits.toFixed(2)} commits, `
    : '';
  return `${store}${(h.serverCores ?? 0).toFixed(2)} server cores`;
}

async function heldScenario(store: StoreName, server: ParleyServer, chatUrl: string): Promise<void> {
  const result = await runHeldCounted(`held load ${store}`, server, chatUrl, plan.held);
  if (result) heldFigures.push({ ...result, store, intervalMs: plan.held.intervalMs });
}

/**
 * A held load's messages that got no reply: acknowledged and never answered, never sent (every connection
 * of the generator waited on the server), or whose request the server never answered. A visitor sees each
 * as a message without an answer.
 */
function unanswered(h: HeldRunResult): number {
  return h.missing + h.unsent + h.hanging;
}

function unansweredText(h: HeldRunResult, word: string): string {
  const parts = [
    h.unsent > 0 && `${num(h.unsent)} never sent`,
    h.hanging > 0 && `${num(h.hanging)} requests without an answer`,
  ].filter((p) => p !== false);
  return `${num(unanswered(h))} ${word}${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`;
}

/** Conversations of the closed loop that measures the capacity the overload offers twice. */
const CAPACITY_CONVERSATIONS = 16;

/**
 * Overload (issue 37): the echo bot's closed-loop capacity (16 conversations, where the chat round
 * trip peaks, each sending its next message when its reply came), then the held load offering twice that for `plan.overload.durationMs`:
 * the replies a second (target: at least 90% of the capacity), the messages refused with 429 (admission
 * control: expected), those acknowledged and never answered after the grace (target: none) and the p99
 * of those admitted (target: under 1 s).
 */
async function overloadScenario(store: StoreName, server: ParleyServer, chatUrl: string): Promise<void> {
  const closed = await measured(server.pids(), {
    kind: 'chat',
    system: 'parley',
    listen: 'sse',
    url: chatUrl,
    conversations: CAPACITY_CONVERSATIONS,
    pollMs: 5,
    ...plan.capacity,
  });
  checkRun(`overload capacity C=${CAPACITY_CONVERSATIONS} (${store})`, closed);
  const capacity = closed.rate;
  log(
    `overload ${store}: closed-loop capacity ${capacity.toFixed(0)} msg/s, p99 ${ms(closed.latency.p99)} ms`,
  );
  const { conversations, warmupMs, durationMs, graceMs } = plan.overload;
  // Each conversation sends every intervalMs: conversations / interval = the offer.
  const intervalMs = Math.round((conversations / (overloadRate ?? 2 * capacity)) * 1000);
  const result = await runHeldCounted(`overload ${store}`, server, chatUrl, {
    conversations,
    intervalMs,
    warmupMs,
    durationMs,
    graceMs,
  });
  if (result) {
    overloadFigures.push({ ...result, store, capacity, capacityP99: closed.latency.p99 });
    log(
      `overload ${store}: ${result.refused} refused with 429 of ${result.sent} sent, ${((result.rate / capacity) * 100).toFixed(0)}% of the capacity in replies/s`,
    );
  }
}

/**
 * AI turns: the held load on a bot whose every reply is an aiGenerate card's call of a model that answers
 * in a fixed time. What Parley adds is the round trip less the model's time; the turns waiting on the
 * model hold no engine place meanwhile (PARLEY_ENGINE_WAITING_TURNS), so 100 of them in flight need no
 * more than the engine's 16.
 */
async function aiTurnScenario(
  store: StoreName,
  server: ParleyServer,
  provider: ProviderReady,
): Promise<void> {
  const bot = await aiTurnBot(`default:${provider.slowModel}`);
  try {
    const { chatUrl } = await deploy(server, bot.dir);
    const result = await runHeldCounted(`AI turns ${store}`, server, chatUrl, plan.aiTurns);
    if (result)
      aiTurnFigures.push({
        ...result,
        store,
        intervalMs: plan.aiTurns.intervalMs,
        modelMs: provider.slowModelMs,
      });
  } finally {
    await bot.remove();
  }
}

async function fanoutScenario(
  store: StoreName,
  server: ParleyServer,
  chatUrl: string,
  protocol: ListenProtocol,
): Promise<void> {
  const { userKey, conversationId } = await chatUserAndConversation(chatUrl);
  const what = protocol === 'websocket' ? `${store} WebSocket` : store;
  const limit = openFilesLimit();
  const serverPid = server.proc.pid;
  // Warm-up with one listener: deliveries until the bot's code is loaded and the routes are hot; then the
  // baseline, and the memory per listener is (RSS with N - RSS with 1) / (N - 1).
  await load.run<FanoutOpenResult>({
    kind: 'fanout-open',
    protocol,
    chatUrl,
    userKey,
    conversationId,
    total: 1,
  });
  await load.run<FanoutDeliverResult>({
    kind: 'fanout-deliver',
    chatUrl,
    userKey,
    conversationId,
    deliveries: 20,
    warmupDeliveries: 0,
    pauseMs: 20,
    timeoutMs: 5000,
  });
  await sleep(1500);
  const rssBefore = rssBytes(serverPid);
  try {
    for (const wanted of protocol === 'websocket' ? plan.webSocketListeners : plan.listeners) {
      // The load process holds a descriptor a listener; the server takes connections up to half of its
      // descriptors (src/descriptors.ts) and closes the others at once.
      const room = Math.min(limit - 500, Math.floor(limit / 2) - 500);
      let listeners = wanted;
      if (room < wanted) {
        listeners = Math.max(0, room);
        note(`open files are limited to ${limit} here: ${listeners} listeners instead of ${wanted}`);
      }
      const open = await load.run<FanoutOpenResult>({
        kind: 'fanout-open',
        protocol,
        chatUrl,
        userKey,
        conversationId,
        total: listeners,
      });
      if (open.failed > 0)
        note(`fan-out ${what}: ${open.failed} listeners failed to open (${open.firstError})`);
      log(`fan-out ${what}: ${open.open} listeners open (${(open.openMs / 1000).toFixed(1)} s)`);
      await sleep(1500);
      const rssOpen = rssBytes(serverPid);
      const cpuBefore = { server: cpuMs(serverPid), load: cpuMs(load.proc.pid), at: performance.now() };
      const delivery = await load.run<FanoutDeliverResult>({
        kind: 'fanout-deliver',
        chatUrl,
        userKey,
        conversationId,
        deliveries: plan.deliveries[wanted] ?? 5,
        warmupDeliveries: 1,
        pauseMs: 300,
        timeoutMs: 15_000,
      });
      const wall = performance.now() - cpuBefore.at;
      const cores = {
        server: (cpuMs(serverPid) - cpuBefore.server) / wall,
        load: (cpuMs(load.proc.pid) - cpuBefore.load) / wall,
      };
      if (delivery.missing > 0) note(`fan-out ${what} N=${open.open}: ${delivery.missing} arrivals missing`);
      const rssAfter = rssBytes(serverPid);
      const sandboxRss = server
        .pids()
        .filter((p) => p !== serverPid)
        .reduce((sum, p) => sum + (rssBytes(p) || 0), 0);
      fanoutFigures.push({
        store,
        protocol,
        listeners: open.open,
        open,
        rssBeforeBytes: rssBefore,
        rssOpenBytes: rssOpen,
        rssAfterDeliveriesBytes: rssAfter,
        sandboxRssBytes: sandboxRss,
        perListenerBytes: (rssOpen - rssBefore) / Math.max(1, open.open - 1),
        delivery,
        deliveryCores: cores,
        message: perDeliveryMedians(delivery, 'message'),
        reply: perDeliveryMedians(delivery, 'reply'),
      });
      log(
        `fan-out ${what} N=${open.open}: RSS ${mb(rssBefore)} -> ${mb(rssOpen)} (${((rssOpen - rssBefore) / Math.max(1, open.open - 1) / 1000).toFixed(1)} kB/listener), message p50 ${delivery.message.p50.toFixed(1)} ms p99 ${delivery.message.p99.toFixed(1)} ms (pooled), to the last ${delivery.lastMs.map((v) => v.toFixed(0)).join('/')} ms, server ${cores.server.toFixed(2)} cores, load ${cores.load.toFixed(2)}`,
      );
    }
  } finally {
    await load.run({ kind: 'fanout-close' });
  }
}

// ---------------------------------------------------------------------------------------------------
// The table and the JSON.

interface Row {
  scenario: string;
  store: string;
  system: string;
  rate: string;
  p50: string;
  p95: string;
  p99: string;
  ratio: string;
  /** Parley's chat rows: what one message cost the server. */
  cost?: string;
  target: string;
  met: string;
}
interface Target {
  name: string;
  store: StoreName;
  value: string;
  target: string;
  met: boolean;
}
const targets: Target[] = [];

const ms = (v: number) => (Number.isFinite(v) ? (v < 10 ? v.toFixed(2) : v.toFixed(1)) : '-');
/** A difference of milliseconds, with its sign. */
const signedMs = (v: number) => (v >= 0 ? `+${ms(v)}` : `−${ms(-v)}`);
const num = (v: number) => (Number.isFinite(v) ? Math.round(v).toLocaleString('en-US') : '-');
const x = (v: number | undefined) => (v !== undefined && Number.isFinite(v) ? `${v.toFixed(2)}×` : '-');
const mb = (b: number) => `${(b / 1e6).toFixed(0)} MB`;

/**
 * Issue 11's targets for Parley's chat round trip, absolute. They are set for SSE listeners: the
 * WebSocket rows are reported beside them, without one.
 */
function chatTarget(
  s: (typeof chatSeries)[number],
): { name: string; value: string; target: string; met: boolean } | undefined {
  if (s.system !== 'Parley' || s.listen !== 'sse') return undefined;
  const { rate, p50, p99 } = s.median;
  const name = `chat round trip, ${s.conversations} conversation${s.conversations === 1 ? '' : 's'}`;
  const rateAndP99 = `${num(rate)} msg/s, p99 ${ms(p99)} ms`;
  const goals: Record<string, () => { value: string; target: string; met: boolean } | undefined> = {
    'sqlite 16': () => ({
      value: rateAndP99,
      target: '≥ 3,500 msg/s, p99 < 20 ms',
      met: rate >= 3500 && p99 < 20,
    }),
    'sqlite 64': () => {
      const at16 = chatSeries.find(
        (o) => o.system === 'Parley' && o.listen === 'sse' && o.store === 'sqlite' && o.conversations === 16,
      );
      if (!at16) return undefined;
      return {
        value: `${num(rate)} msg/s (16: ${num(at16.median.rate)})`,
        target: '≥ msg/s at 16 conversations',
        met: rate >= at16.median.rate,
      };
    },
    'postgres 16': () => ({
      value: rateAndP99,
      target: '≥ 1,500 msg/s, p99 < 40 ms',
      met: rate >= 1500 && p99 < 40,
    }),
    'postgres 1': () => ({ value: `p50 ${ms(p50)} ms`, target: 'p50 < 3 ms', met: p50 < 3 }),
  };
  const goal = goals[`${s.store} ${s.conversations}`]?.();
  return goal && { name, ...goal };
}

function buildRows(): Row[] {
  const rows: Row[] = [];
  for (const s of chatSeries) {
    const isParley = s.system === 'Parley';
    const goal = chatTarget(s);
    const target = goal?.target ?? '';
    const met = goal ? (goal.met ? 'yes' : 'no') : '';
    if (goal) targets.push({ ...goal, store: s.store as StoreName });
    const ratio = isParley
      ? [
          s.ratio?.botkit !== undefined ? `${x(s.ratio.botkit)} Botkit` : '',
          s.ratio?.directline !== undefined ? `${x(s.ratio.directline)} BF` : '',
        ]
          .filter(Boolean)
          .join(', ')
      : '';
    rows.push({
      scenario: s.scenario,
      store: s.store,
      system: s.system,
      rate: `${num(s.median.rate)} msg/s`,
      p50: ms(s.median.p50),
      p95: ms(s.median.p95),
      p99: ms(s.median.p99),
      ratio,
      cost: s.cost ? costText(s.cost) : '',
      target,
      met,
    });
  }
  for (const s of actionSeries) {
    let target = '';
    let met = '';
    if (s.ratioToCeiling !== undefined) {
      const want = s.system.includes('cached') ? 0.7 : 0.4;
      target = `≥ ${want * 100}% of ceiling`;
      met = s.ratioToCeiling >= want ? 'yes' : 'no';
      targets.push({
        name: `${s.system}: req/s vs node:http ceiling`,
        store: s.store as StoreName,
        value: x(s.ratioToCeiling),
        target,
        met: s.ratioToCeiling >= want,
      });
    }
    rows.push({
      scenario: s.scenario,
      store: s.store,
      system: s.system,
      rate: `${num(s.median.rate)} req/s`,
      p50: ms(s.median.p50),
      p95: ms(s.median.p95),
      p99: ms(s.median.p99),
      ratio: s.ratioToCeiling !== undefined ? `${x(s.ratioToCeiling)} ceiling` : '',
      cost: callCostText(s.cost, s.cpuMicros),
      target,
      met,
    });
  }
  for (const s of searchSeries) {
    rows.push({
      scenario: s.scenario,
      store: s.store,
      system: s.system,
      rate: `${num(s.median.rate)} queries/s`,
      p50: ms(s.median.p50),
      p95: ms(s.median.p95),
      p99: ms(s.median.p99),
      ratio: '',
      target: '',
      met: '',
    });
  }
  for (const s of tablesSeries) {
    const { rate } = s.median;
    const rowRate = (s.rowsPerCall ?? 1) * rate;
    rows.push({
      scenario: s.scenario,
      store: s.store,
      system: s.system,
      rate:
        s.unit === 'rows/s'
          ? `${num(rowRate)} rows/s`
          : s.unit === 'calls/s'
            ? `${rate.toFixed(1)} calls/s, ${num(rowRate)} rows/s`
            : `${num(rate)} req/s`,
      p50: ms(s.median.p50),
      p95: ms(s.median.p95),
      p99: ms(s.median.p99),
      ratio: '',
      cost: `${median(s.runs.map((r) => r.serverCores ?? NaN)).toFixed(2)} server cores`,
      target: '',
      met: '',
    });
  }
  for (const f of llmFigures) {
    const { firstTokenDelayMs, tokenDelayMs } = f.pacing;
    const stream = `LLM stream of ${f.tokens} tokens (the first after ${firstTokenDelayMs} ms, then every ${tokenDelayMs} ms), ${f.concurrency} at a time`;
    const measures = [
      { key: 'ttft', what: 'time to first token' },
      { key: 'total', what: 'time to last byte' },
    ] as const;
    for (const { key, what } of measures) {
      const scenario = `${stream}: ${what}`;
      const added = f.added[key];
      const met = added.p50 < LLM_ADDED_TARGET.p50 && added.p99 < LLM_ADDED_TARGET.p99;
      const target = `added: p50 < ${LLM_ADDED_TARGET.p50} ms, p99 < ${LLM_ADDED_TARGET.p99} ms`;
      targets.push({
        name: `LLM gateway, ${f.concurrency} stream${f.concurrency === 1 ? '' : 's'} at a time: ${what} added`,
        store: f.store,
        value: `p50 ${signedMs(added.p50)} ms, p99 ${signedMs(added.p99)} ms`,
        target,
        met,
      });
      for (const [system, arm] of [
        ['provider alone', f.provider],
        ['through Parley', f.parley],
      ] as const) {
        rows.push({
          scenario,
          store: f.store,
          system,
          rate: `${arm.rate.toFixed(1)} streams/s`,
          p50: ms(arm[key].p50),
          p95: ms(arm[key].p95),
          p99: ms(arm[key].p99),
          ratio: '',
          cost:
            arm === f.parley
              ? `${f.parleyCores.toFixed(2)} server cores, ${f.parleyCpuMsPerStream.toFixed(2)} ms CPU a stream`
              : '',
          target: '',
          met: '',
        });
      }
      rows.push({
        scenario,
        store: f.store,
        system: 'added by Parley',
        rate: '',
        p50: signedMs(added.p50),
        p95: signedMs(added.p95),
        p99: signedMs(added.p99),
        ratio: '',
        target,
        met: met ? 'yes' : 'no',
      });
    }
  }
  for (const c of sdkColdStarts) {
    rows.push({
      scenario: 'SDK bot cold start: from its deploy to the answer to its first message (its process starts)',
      store: c.store,
      system: 'Parley, SDK bot (bp deploy)',
      rate: '',
      p50: ms(median(c.ms)),
      p95: '',
      p99: '',
      ratio: '',
      cost: `${c.ms.length} bots, max ${ms(Math.max(...c.ms))} ms`,
      target: '',
      met: '',
    });
  }
  for (const h of heldFigures) {
    // No reply at all has no latency (null once it crossed the IPC channel): not met.
    const ok = Number.isFinite(h.latency.p99) && h.latency.p99 < 50 && unanswered(h) === 0;
    const target = 'p99 < 50 ms, none missing';
    targets.push({
      name: `held load, ${h.conversations.toLocaleString('en-US')} conversations: p99, missing`,
      store: h.store,
      value: `p99 ${ms(h.latency.p99)} ms, ${unansweredText(h, 'missing')}`,
      target,
      met: ok,
    });
    rows.push({
      scenario: `held load, ${h.conversations.toLocaleString('en-US')} conversations, a message every ${h.intervalMs / 1000} s each`,
      store: h.store,
      system: 'Parley',
      rate: `${num(h.rate)} msg/s`,
      p50: ms(h.latency.p50),
      p95: ms(h.latency.p95),
      p99: ms(h.latency.p99),
      ratio: `of ${num(h.offeredRate)} offered, ${unansweredText(h, 'missing')}`,
      cost: heldCostText(h),
      target,
      met: ok ? 'yes' : 'no',
    });
  }
  for (const o of overloadFigures) {
    const share = o.rate / o.capacity;
    const ok = share >= 0.9 && unanswered(o) === 0 && Number.isFinite(o.latency.p99) && o.latency.p99 < 1000;
    const target = '≥ 90% of capacity, none unanswered, p99 < 1 s';
    targets.push({
      name: 'overload, twice the capacity offered: replies/s, unanswered, p99 of the admitted',
      store: o.store,
      value: `${(share * 100).toFixed(0)}% of ${num(o.capacity)} msg/s, ${unansweredText(o, 'unanswered')}, p99 ${ms(o.latency.p99)} ms`,
      target,
      met: ok,
    });
    rows.push({
      scenario: `overload: ${num(o.offeredRate)} msg/s offered (${overloadRate === undefined ? 'twice' : 'as asked, against'} the closed-loop capacity at ${CAPACITY_CONVERSATIONS} conversations) for ${o.windowMs / 1000} s`,
      store: o.store,
      system: 'Parley',
      rate: `${num(o.rate)} replies/s`,
      p50: ms(o.latency.p50),
      p95: ms(o.latency.p95),
      p99: ms(o.latency.p99),
      ratio: `${(share * 100).toFixed(0)}% of ${num(o.capacity)} msg/s capacity; ${num(o.refused)} of ${num(o.sent)} refused (429), ${unansweredText(o, 'unanswered')}`,
      cost: heldCostText(o),
      target,
      met: ok ? 'yes' : 'no',
    });
  }
  for (const a of aiTurnFigures) {
    // What Parley adds to the model's fixed time; no reply at all has no latency (null over IPC): not met.
    const added = a.latency.p99 - a.modelMs;
    const ok = Number.isFinite(added) && added < 50 && unanswered(a) === 0;
    const target = 'p99 added < 50 ms, none missing';
    const conversations = a.conversations.toLocaleString('en-US');
    targets.push({
      name: `AI turns, ${conversations} conversations, model ${a.modelMs / 1000} s: p99 added, missing`,
      store: a.store,
      value: `+${ms(added)} ms at p99, ${unansweredText(a, 'missing')}`,
      target,
      met: ok,
    });
    rows.push({
      scenario: `AI turns (aiGenerate, a model answering in ${a.modelMs / 1000} s), ${conversations} conversations, a message every ${a.intervalMs / 1000} s each`,
      store: a.store,
      system: 'Parley',
      rate: `${num(a.rate)} msg/s`,
      p50: ms(a.latency.p50),
      p95: ms(a.latency.p95),
      p99: ms(a.latency.p99),
      ratio: `+${ms(added)} ms at p99 over the model, ${unansweredText(a, 'missing')}`,
      cost: heldCostText(a),
      target,
      met: ok ? 'yes' : 'no',
    });
  }
  // Store by store, the WebSocket row after the SSE row of as many listeners (it runs later, on its own server).
  const storeOrder = [...new Set(fanoutFigures.map((f) => f.store))];
  const fanoutOrder = [...fanoutFigures].sort(
    (a, b) => storeOrder.indexOf(a.store) - storeOrder.indexOf(b.store) || a.listeners - b.listeners,
  );
  for (const f of fanoutOrder) {
    const memory = `RSS ${mb(f.rssOpenBytes)}, ${(f.perListenerBytes / 1000).toFixed(1)} kB/listener`;
    const scenario = withProtocol(
      `live fan-out, ${f.listeners.toLocaleString('en-US')} idle listeners`,
      f.protocol,
    );
    let target = '';
    let met = '';
    // As for the chat: the targets are SSE's.
    const targeted = f.protocol === 'sse';
    if (targeted && f.listeners >= 10_000) {
      target = 'RSS < 300 MB';
      met = f.rssOpenBytes < 300e6 ? 'yes' : 'no';
      targets.push({
        name: '10,000 idle listeners: resident memory',
        store: f.store,
        value: `${(f.rssOpenBytes / 1e6).toFixed(0)} MB`,
        target,
        met: f.rssOpenBytes < 300e6,
      });
    } else if (targeted && f.listeners >= 1000) {
      target = 'p99 < 50 ms';
      met = f.message.p99 < 50 ? 'yes' : 'no';
      targets.push({
        name: 'one message to 1,000 listeners: p99',
        store: f.store,
        value: `${ms(f.message.p99)} ms`,
        target,
        met: f.message.p99 < 50,
      });
    }
    rows.push({
      scenario,
      store: f.store,
      system: 'Parley: one message to all',
      rate: memory,
      p50: ms(f.message.p50),
      p95: ms(f.message.p95),
      p99: ms(f.message.p99),
      ratio: '',
      target,
      met,
    });
    rows.push({
      scenario,
      store: f.store,
      system: "Parley: the bot's reply to all",
      rate: '',
      p50: ms(f.reply.p50),
      p95: ms(f.reply.p95),
      p99: ms(f.reply.p99),
      ratio: '',
      target: '',
      met: '',
    });
  }
  return rows;
}

function markdownTable(rows: Row[]): string {
  const head: Row = {
    scenario: 'scenario',
    store: 'store',
    system: 'system',
    rate: 'msg/s, req/s or memory',
    p50: 'p50 ms',
    p95: 'p95 ms',
    p99: 'p99 ms',
    ratio: 'ratio',
    cost: 'per message or call (server)',
    target: 'target',
    met: 'met?',
  };
  const keys = Object.keys(head) as (keyof Row)[];
  const right = new Set<keyof Row>(['p50', 'p95', 'p99']);
  const cell = (r: Row, k: keyof Row) => r[k] ?? '';
  const width = Object.fromEntries(
    keys.map((k) => [k, Math.max(3, ...[head, ...rows].map((r) => cell(r, k).length))]),
  ) as Record<keyof Row, number>;
  const line = (r: Row) =>
    `| ${keys.map((k) => (right.has(k) ? cell(r, k).padStart(width[k]) : cell(r, k).padEnd(width[k]))).join(' | ')} |`;
  const rule = `| ${keys.map((k) => (right.has(k) ? `${'-'.repeat(width[k] - 1)}:` : '-'.repeat(width[k]))).join(' | ')} |`;
  return [line(head), rule, ...rows.map(line)].join('\n');
}

function machine() {
  let osName = `${os.type()} ${os.release()}`;
  try {
    const pretty = /^PRETTY_NAME="?([^"\n]+)"?$/m.exec(readFileSync('/etc/os-release', 'utf8'))?.[1];
    if (pretty) osName = `${pretty} (${os.type()} ${os.release()})`;
  } catch {
    // not Linux
  }
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
    os: osName,
    loadAverage: os.loadavg().map((l) => Math.round(l * 100) / 100),
  };
}

// ---------------------------------------------------------------------------------------------------

let load: JobProcess<Job, JobResult>;

async function main(): Promise<number> {
  const command = `npm run bench${quick ? ' -- --quick' : ''}`;
  const info = machine();
  log(
    `${command}: ${info.cpu}, ${info.cores} cores, ${info.memoryGiB} GiB, ${info.os}, Node ${process.version}`,
  );
  if (info.cores < 2) note('fewer than 2 cores: server and load generator share one core');
  log(
    pinningOn()
      ? `servers pinned to core ${SERVER_CPU}, load generator to core ${LOAD_CPU}`
      : 'no core pinning',
  );

  const wantPeers = scenarios.has('chat');
  const havePeers = wantPeers ? await installPeers() : false;

  load = await startLoad();
  cleanupTasks.push(() => stop(load.proc.pid));
  const peers: Peers = {};
  if (scenarios.has('actions'))
    peers.ceiling = await startServerProcess(
      'node:http echo',
      path.join(BENCH_DIR, 'peers', 'http-echo.mjs'),
    );
  const provider =
    scenarios.has('llm') || scenarios.has('aiturn') || scenarios.has('retrieval')
      ? await startModelProvider()
      : undefined;
  if (havePeers) {
    peers.botkit = await startServerProcess('Botkit echo', path.join(BENCH_DIR, 'peers', 'botkit-echo.mjs'));
    peers.directline = await startServerProcess(
      'Bot Framework echo',
      path.join(BENCH_DIR, 'peers', 'botframework-echo.mjs'),
    );
  }

  const storeNames = options.stores?.split(',') ?? (quick ? ['sqlite'] : ['sqlite', 'postgres']);
  const unknown = storeNames.filter((name) => name !== 'sqlite' && name !== 'postgres');
  if (unknown.length) throw new Error(`--stores takes sqlite and/or postgres, not ${unknown.join(', ')}`);
  let stores = storeNames as StoreName[];
  if (stores.includes('postgres')) {
    const problem = await postgresProblem();
    if (problem) {
      note(`Postgres not reachable at ${POSTGRES_URL} (${problem}): SQLite only`);
      stores = stores.filter((s) => s !== 'postgres');
    }
  }
  if (quick)
    note(
      `--quick: SQLite only, 1 and 16 conversations, one round, 1,000 listeners, held load of ${plan.held.conversations} conversations for ${(plan.held.warmupMs + plan.held.durationMs) / 1000} s: indicative figures`,
    );

  const profileRoot = path.join(BENCH_DIR, 'results', 'profiles');
  if (options.profile) await rm(profileRoot, { recursive: true, force: true });

  for (const store of stores) {
    const profileDir = path.join(profileRoot, store);
    if (options.profile) await mkdir(profileDir, { recursive: true });
    if (scenarios.has('retrieval')) {
      if (!provider) throw new Error('the model provider is not running');
      await retrievalScenario(store, provider);
    }
    if ([...scenarios].every((s) => s === 'retrieval')) continue;
    const uncachedDir = await uncachedActionBot();
    cleanupTasks.push(() => uncachedDir.remove());
    /** `parley serve` on this store with the three bots deployed. */
    const serve = async () => {
      log(`starting parley serve on ${store}`);
      const server = await startParley(
        store,
        options.profile ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [],
        provider ? llmSettings(provider) : {},
      );
      cleanupTasks.push(() => server.stop());
      try {
        const [echo, actionBot, uncached] = await Promise.all([
          deploy(server, path.join(ROOT, 'examples', 'echo-bot')),
          deploy(server, path.join(ROOT, 'examples', 'action-bot')),
          deploy(server, uncachedDir.dir),
        ]);
        log(`deployed echo-bot, action-bot and action-bot-uncached with parley deploy`);
        return { server, echo, actionBot, uncached };
      } catch (err) {
        await server.stop();
        throw err;
      }
    };
    try {
      const { server, echo, actionBot, uncached } = await serve();
      try {
        // Fan-out first, on a server that has done nothing else yet: its memory baseline is not inflated by
        // the garbage of the other scenarios.
        if (scenarios.has('fanout')) await fanoutScenario(store, server, echo.chatUrl, 'sse');
        if (scenarios.has('chat')) await chatScenario(store, server, echo.chatUrl, peers);
        if (scenarios.has('sdk')) await sdkScenario(store, server);
        if (scenarios.has('actions')) {
          const bots = {
            cached: { botId: actionBot.botId, key: await botApiKey(server, actionBot.botId) },
            uncached: { botId: uncached.botId, key: await botApiKey(server, uncached.botId) },
          };
          if (!peers.ceiling) throw new Error('the ceiling server is not running');
          await actionScenario(store, server, bots, peers.ceiling);
        }
        if (scenarios.has('search')) await searchScenario(store, server);
        if (scenarios.has('tables')) await tablesScenario(store, server);
        if (scenarios.has('llm')) {
          if (!provider) throw new Error('the model provider is not running');
          await llmScenario(store, server, provider);
        }
        if (scenarios.has('aiturn')) {
          if (!provider) throw new Error('the model provider is not running');
          await aiTurnScenario(store, server, provider);
        }
        // Last: a server that falls behind is still working through the backlog when the run ends, and
        // would slow whatever came after it.
        if (scenarios.has('held')) await heldScenario(store, server, echo.chatUrl);
        if (scenarios.has('overload')) await overloadScenario(store, server, echo.chatUrl);
        server.pids();
      } finally {
        await server.stop();
      }
      // The WebSocket fan-out on a fresh server of its own, for the same clean memory baseline.
      if (scenarios.has('fanout')) {
        const fresh = await serve();
        try {
          await fanoutScenario(store, fresh.server, fresh.echo.chatUrl, 'websocket');
        } finally {
          await fresh.server.stop();
        }
      }
    } finally {
      await uncachedDir.remove();
    }
    if (options.profile) {
      await sleep(500);
      profiles[store] = await summarizeProfiles(profileDir, 25);
    }
  }

  retrievalTargets();
  const rows = buildRows();
  const table = markdownTable(rows);
  const retrieval = retrievalFigures.length > 0 ? retrievalTable() : undefined;
  const date = new Date().toISOString();
  const result = {
    date,
    command,
    quick,
    machine: info,
    node: process.version,
    stores,
    pinned: pinningOn() ? { servers: `core ${SERVER_CPU}`, load: `core ${LOAD_CPU}` } : false,
    plan,
    peers: havePeers
      ? {
          botkit: 'botkit 4 + botbuilder-adapter-web (websocket), one websocket per conversation',
          botframework:
            'botbuilder 4 CloudAdapter behind offline-directline; the client polls every 5 ms after its send answers',
        }
      : 'skipped',
    notes,
    targets,
    chat: chatSeries,
    actions: actionSeries,
    search: searchSeries,
    tables: tablesSeries,
    retrieval: retrievalFigures,
    ...(retrieval !== undefined && { retrievalTable: retrieval }),
    llm: llmFigures,
    fanout: fanoutFigures,
    held: heldFigures,
    overload: overloadFigures,
    aiTurns: aiTurnFigures,
    rows,
    table,
    ...(options.profile && { profiles }),
    elapsedSeconds: round((performance.now() - t0) / 1000),
  };
  const file = path.join(BENCH_DIR, 'results', 'latest.json');
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify(result, null, 2) + '\n');

  if (rows.length > 0) process.stdout.write(`\n${table}\n\n`);
  if (retrieval !== undefined) process.stdout.write(`${retrieval}\n\n`);
  process.stdout.write(
    `${date.slice(0, 10)}, ${info.cpu}, ${info.cores} cores, ${info.memoryGiB} GiB, ${info.os}, Node ${process.version}; ` +
      `${pinningOn() ? `servers on core ${SERVER_CPU}, load on core ${LOAD_CPU}; ` : ''}medians of ${plan.rounds} alternating rounds\n`,
  );
  for (const t of targets)
    process.stdout.write(
      `target ${t.met ? 'met   ' : 'MISSED'} ${t.store}: ${t.name}: ${t.value} (${t.target})\n`,
    );
  for (const n of notes) process.stdout.write(`note: ${n}\n`);
  if (options.profile) {
    for (const [store, list] of Object.entries(profiles)) {
      for (const p of list) {
        process.stdout.write(
          `\nprofile ${store} ${p.file} (${(p.totalMs / 1000).toFixed(1)} s sampled), top self time:\n`,
        );
        for (const f of p.top)
          process.stdout.write(
            `  ${f.selfMs.toFixed(0).padStart(7)} ms ${f.percent.toFixed(1).padStart(5)}%  ${f.name}  ${f.where}\n`,
          );
      }
    }
  }
  process.stdout.write(
    `wrote ${path.relative(ROOT, file)} (${((performance.now() - t0) / 1000).toFixed(0)} s)\n`,
  );
  return 0;
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (err) {
  if (!stopping) process.stderr.write(`bench failed: ${(err as Error).stack ?? String(err)}\n`);
} finally {
  await cleanup();
  // Temp profiles dirs are kept under bench/results (ignored by git); list them for the reader.
  if (options.profile && existsSync(path.join(BENCH_DIR, 'results', 'profiles'))) {
    const dirs = await readdir(path.join(BENCH_DIR, 'results', 'profiles'));
    process.stdout.write(`CPU profiles kept in bench/results/profiles/{${dirs.join(',')}}\n`);
  }
}
clearTimeout(watchdog);
process.exit(exitCode);
