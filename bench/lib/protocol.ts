import type { Latency } from './stats.ts';

/** Bounds of one closed-loop run: a warm-up whose results are dropped, then a measured window. */
export interface RunBounds {
  warmupMs: number;
  durationMs: number;
  /** The run stops early once this many results were measured. */
  maxMeasured: number;
}

/** How a Chat API listener reads a conversation: server-sent events or a WebSocket, on the same route. */
export type ListenProtocol = 'sse' | 'websocket';

/** One chat round-trip run: `conversations` end users, each sending and waiting for the echo. */
export interface ChatJob extends RunBounds {
  kind: 'chat';
  system: 'parley' | 'botkit' | 'directline';
  /** Parley: the bot's chat URL; Botkit: the websocket URL; Direct Line: the bridge's origin. */
  url: string;
  conversations: number;
  /** Parley: how each conversation's listener reads the replies (SSE unless said). */
  listen?: ListenProtocol;
  /** Direct Line: the client's polling interval while a reply is not there yet. */
  pollMs?: number;
}

/**
 * A closed-loop HTTP run: POSTs of `{ type, input: { text } }` (the action call and its ceiling), or,
 * with `gets`, GETs of these paths in turn (searches).
 */
export interface HttpJob extends RunBounds {
  kind: 'http';
  url: string;
  headers: Record<string, string>;
  gets?: string[];
  /** The action type of the body `{ type, input: { text } }`. */
  actionType: string;
  /** `fixed`: every request has the same input (cache hits); `unique`: a counter makes each input new. */
  input: 'fixed' | 'unique';
  concurrency: number;
  /** The status every answer must have. */
  expectStatus: number;
}

/** Opens idle listeners (SSE or WebSocket) on one conversation until `total` are open. */
export interface FanoutOpenJob {
  kind: 'fanout-open';
  protocol: ListenProtocol;
  chatUrl: string;
  userKey: string;
  conversationId: string;
  total: number;
}

/** Sends `deliveries` chat messages, one at a time, and times their arrival at every open listener. */
export interface FanoutDeliverJob {
  kind: 'fanout-deliver';
  chatUrl: string;
  userKey: string;
  conversationId: string;
  deliveries: number;
  /** Deliveries made first and not counted (their time to the last listener is reported apart). */
  warmupDeliveries: number;
  pauseMs: number;
  timeoutMs: number;
}

export interface FanoutCloseJob {
  kind: 'fanout-close';
}

/** Opens `conversations` end users, each with a conversation and its SSE listener, for the held load. */
export interface HeldOpenJob {
  kind: 'held-open';
  chatUrl: string;
  conversations: number;
}

/**
 * The held load, open loop: each open conversation sends a message every `intervalMs` (a random phase
 * each) whether or not its previous reply came; the latency is from the scheduled send to the bot's reply.
 * Sends before `warmupMs` are not counted; after the measured window, replies are awaited for `graceMs`
 * at most, then what did not come back is counted missing.
 */
export interface HeldRunJob {
  kind: 'held-run';
  chatUrl: string;
  intervalMs: number;
  warmupMs: number;
  durationMs: number;
  graceMs: number;
  /** Connections the sends may use at once (a send waits for one beyond that). */
  maxConnections: number;
}

export interface HeldCloseJob {
  kind: 'held-close';
}

export type Job =
  | ChatJob
  | HttpJob
  | FanoutOpenJob
  | FanoutDeliverJob
  | FanoutCloseJob
  | HeldOpenJob
  | HeldRunJob
  | HeldCloseJob;

export interface RunResult {
  /** Results measured (round trips or requests) inside the measured window. */
  measured: number;
  errors: number;
  firstError?: string;
  windowMs: number;
  /** measured / window, per second. */
  rate: number;
  latency: Latency;
  /** Set by the orchestrator: CPU time of the system under test over the job's wall time (1 = one core busy). */
  serverCores?: number;
  /** The same for the load process: well under 1 means the load generator was not the bottleneck. */
  loadCores?: number;
  /** Set by the orchestrator for Parley's chat runs: what one chat message cost the server, on average. */
  cost?: MessageCost;
}

/** What the server spent per chat message over a run (warm-up included), from its /metrics counters. */
export interface MessageCost {
  messages: number;
  statements: number;
  commits: number;
  sandboxCalls: number;
  /** Server CPU (the API process and its sandbox processes), microseconds per message. */
  cpuMicros: number;
  /** Of which the sandbox processes' CPU, microseconds per message. */
  sandboxCpuMicros: number;
}

export interface FanoutOpenResult {
  open: number;
  failed: number;
  firstError?: string;
  openMs: number;
}

export interface FanoutDeliverResult {
  listeners: number;
  deliveries: number;
  /** Every listener's arrival time of the user's message, from the send, pooled over deliveries. */
  message: Latency;
  /** The same for the echo bot's reply to it (the bot reply path). */
  reply: Latency;
  /** Per delivery: the percentiles over listeners of the message's and the reply's arrival. */
  perDelivery: { message: Latency; reply: Latency }[];
  /** Per delivery: the time for the message to reach the last listener. */
  lastMs: number[];
  /** The same for the warm-up deliveries. */
  warmupLastMs: number[];
  missing: number;
}

export interface HeldRunResult {
  conversations: number;
  /** What the schedule offers: conversations / interval, per second. */
  offeredRate: number;
  /** Sends scheduled in the measured window. */
  sent: number;
  /** Replies (to any send) received in the measured window, per second. */
  rate: number;
  /** From the scheduled send to the reply, over the measured sends that were answered. */
  latency: Latency;
  /** Measured sends acknowledged (201) without a reply at the end of the grace period. */
  missing: number;
  /** Measured sends acknowledged (201). */
  acknowledged: number;
  /** From the scheduled send to its 201 or 429: the wait for one of the generator's connections included. */
  answerLatency: Latency;
  /** Measured sends that waited for one of the generator's connections (all `connections` were busy). */
  connectionWaits: number;
  /** Measured sends still waiting for a connection when the grace ended: never sent, never answered. */
  unsent: number;
  /** Measured sends whose request had no answer (no status) when the grace ended. */
  hanging: number;
  /** Measured sends refused with 429 (admission control): not stored, no reply owed. */
  refused: number;
  sendErrors: number;
  firstError?: string;
  windowMs: number;
  /** Connections the sends opened. */
  connections: number;
  /** Set by the orchestrator, as in RunResult. */
  serverCores?: number;
  loadCores?: number;
}

export type JobResult =
  RunResult | FanoutOpenResult | FanoutDeliverResult | HeldRunResult | Record<string, never>;
