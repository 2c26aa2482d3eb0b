import { isIP } from 'node:net';
import { parseArgs } from 'node:util';
import path from 'node:path';
import { parseAddressList } from './domain/shared/public-addresses.ts';
import type { AddressList } from './domain/shared/public-addresses.ts';
import { DEFAULT_PROVIDER } from './domain/llm/providers.ts';
import type { LlmOptions, ModelPrice } from './domain/llm/providers.ts';
import { SEARCH_RANKINGS, VECTOR_INDEX_CHOICES } from './value-sets.ts';
import type { SearchRanking, VectorIndexChoice } from './value-sets.ts';

/**
 * Every setting of a Parley process, read once from flags and the environment.
 * docs/configuration.md's table is written from these entries (`npm run docs`; test/docs.test.ts checks it).
 */
export interface Setting {
  env: string;
  flag: string;
  description: string;
  default?: string;
}

export const SETTINGS = {
  port: { env: 'PORT', flag: 'port', default: '3000', description: 'TCP port the server listens on.' },
  host: {
    env: 'HOST',
    flag: 'host',
    default: '127.0.0.1',
    description: 'Interface the server binds to; `0.0.0.0` listens on every interface.',
  },
  dataDir: {
    env: 'DATA_DIR',
    flag: 'data-dir',
    default: './data',
    description: 'Folder for the embedded SQLite database (`parley.db`) and other local state.',
  },
  databaseUrl: {
    env: 'DATABASE_URL',
    flag: 'database-url',
    description:
      'A `postgres://` URL switches the store to PostgreSQL; unset (or `sqlite:<file>`) uses SQLite in `DATA_DIR`.',
  },
  logLevel: {
    env: 'LOG_LEVEL',
    flag: 'log-level',
    default: 'info',
    description: 'One of `fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`.',
  },
  adminToken: {
    env: 'PARLEY_ADMIN_TOKEN',
    flag: 'admin-token',
    description:
      'On first start with an empty store, the owner token to create instead of a random one (for automation). At least 24 characters.',
  },
  publicUrl: {
    env: 'PARLEY_PUBLIC_URL',
    flag: 'public-url',
    description:
      'Origin that clients use to reach this server, used in the URLs it hands out (webhook URLs). Defaults to `http://HOST:PORT`.',
  },
  contentUrl: {
    env: 'PARLEY_CONTENT_URL',
    flag: 'content-url',
    description:
      'Origin of its own (another host name reaching this server, ideally of another site) from which file contents are served: download and upload URLs point there, every type may be shown inline (sandboxed, no script), and that origin serves nothing else. The main origin then redirects downloads to it. Unset: contents are served from the main origin, as attachments unless an image (not SVG), PDF, plain text, audio or video.',
  },
  chatEncryptionKey: {
    env: 'PARLEY_CHAT_ENCRYPTION_KEY',
    flag: 'chat-encryption-key',
    description:
      'Secret that signs Chat API user keys of channels in shared mode. Unset: one is generated at first start and kept in the store.',
  },
  chatPingIntervalMs: {
    env: 'PARLEY_CHAT_PING_INTERVAL_MS',
    flag: 'chat-ping-interval-ms',
    // Under 5 s: the official chat client in Node (eventsource 2 on Node's keep-alive agent) stops
    // receiving on a stream that was silent for 5 s, without an error.
    default: '4000',
    description: 'Interval of the `data: ping` keep-alive frame on Chat API event streams, in milliseconds.',
  },
  engineConcurrency: {
    env: 'PARLEY_ENGINE_CONCURRENCY',
    flag: 'engine-concurrency',
    default: '16',
    description: 'Turns this process runs at once (each of a different conversation).',
  },
  engineWorkspaceConcurrency: {
    env: 'PARLEY_ENGINE_WORKSPACE_CONCURRENCY',
    flag: 'engine-workspace-concurrency',
    description:
      'Turns of one workspace this process runs at once while other workspaces have turns running or waiting: the rest of `PARLEY_ENGINE_CONCURRENCY` is theirs, so that one with a backlog or slow turns cannot hold them all. A workspace alone may use them all. Unset: three quarters of `PARLEY_ENGINE_CONCURRENCY`, rounded up.',
  },
  engineWaitingTurns: {
    env: 'PARLEY_ENGINE_WAITING_TURNS',
    flag: 'engine-waiting-turns',
    default: '256',
    description:
      'Turns that may wait on a model’s answer (an AI card’s call) without holding one of the `PARLEY_ENGINE_CONCURRENCY` places, so that other turns run meanwhile; one workspace may hold its share of them (as of the places) while others have turns too. Past it a turn waits in its place.',
  },
  engineWorkspaceBacklog: {
    env: 'PARLEY_ENGINE_WORKSPACE_BACKLOG',
    flag: 'engine-workspace-backlog',
    default: '10000',
    description:
      'Events one workspace may have waiting for its bots; past it, a new message, event or webhook request for its bots is refused with 429 `RateLimited` and `Retry-After` until its backlog goes down.',
  },
  admission: {
    env: 'PARLEY_ADMISSION',
    flag: 'admission',
    default: 'on',
    description:
      '`on` or `off`: admission control. While the engines are behind (more events wait for a turn, across every process on the store, than `PARLEY_ADMISSION_BACKLOG` or than they run in `PARLEY_ADMISSION_WAIT_MS`), a new message, event or webhook request of a workspace holding its share of that queue or more is refused with 429 `RateLimited` and `Retry-After`, before it is stored; past twice the limit, every workspace’s is.',
  },
  admissionBacklog: {
    env: 'PARLEY_ADMISSION_BACKLOG',
    flag: 'admission-backlog',
    default: '1000',
    description:
      'Events waiting for a turn (acknowledged, not yet begun) across the deployment past which admission control refuses new ones: the most it allows however fast the turns run.',
  },
  admissionWaitMs: {
    env: 'PARLEY_ADMISSION_WAIT_MS',
    flag: 'admission-wait-ms',
    default: '500',
    description:
      'The wait for a turn a new message may expect, in milliseconds: admission control’s limit is what the engines run in that time (their turns a second, from each process’s turn times, times the processes running turns), when fewer than `PARLEY_ADMISSION_BACKLOG`.',
  },
  postgresPoolSize: {
    env: 'PARLEY_POSTGRES_POOL_SIZE',
    flag: 'postgres-pool-size',
    default: '10',
    description:
      'Connections this process keeps open to PostgreSQL, at most. Requests may hold two thirds of them; the rest are kept for the turns that answer them.',
  },
  postgresStatementTimeoutMs: {
    env: 'PARLEY_POSTGRES_STATEMENT_TIMEOUT_MS',
    flag: 'postgres-statement-timeout-ms',
    default: '10000',
    description: 'Longest a PostgreSQL statement may run before it is cancelled (the request answers 504).',
  },
  sqliteRegexTimeoutMs: {
    env: 'PARLEY_SQLITE_REGEX_TIMEOUT_MS',
    flag: 'sqlite-regex-timeout-ms',
    default: '100',
    description:
      'Longest a SQLite statement that matches `$regex` filters may run (it holds the server while it runs): past it the query answers 400 `InvalidQuery`.',
  },
  sqliteVecPath: {
    env: 'PARLEY_SQLITE_VEC_PATH',
    flag: 'sqlite-vec-path',
    description:
      "sqlite-vec's loadable file (`vec0.so`, `.dylib`, `.dll`) for SQLite's vector index, where the npm package `sqlite-vec` ships none for the platform (a build of your own). Unset: the package's. A file that does not load leaves searches by meaning on the exact scan (the log says so once).",
  },
  sandboxProcesses: {
    env: 'PARLEY_SANDBOX_PROCESSES',
    flag: 'sandbox-processes',
    default: '1',
    description: 'Sandbox processes that run bot code (isolated-vm isolates, one per deployed bot version).',
  },
  sandboxMaxMemoryMb: {
    env: 'PARLEY_SANDBOX_MAX_MEMORY_MB',
    flag: 'sandbox-max-memory-mb',
    default: '1024',
    description:
      'Most memory a sandbox process may hold, in MB: all its isolates together, WebAssembly and buffers included. Past it the process is restarted and the calls it held fail.',
  },
  sdkBotProcesses: {
    env: 'PARLEY_SDK_BOT_PROCESSES',
    flag: 'sdk-bot-processes',
    default: '20',
    description:
      'Processes of bots deployed with `bp deploy` (one per bot) running at once; past it the one idle longest stops, and if none is idle the event waits (a warning in the log says so).',
  },
  sdkBotIdleSeconds: {
    env: 'PARLEY_SDK_BOT_IDLE_SECONDS',
    flag: 'sdk-bot-idle-seconds',
    default: '300',
    description:
      'A `bp deploy` bot whose process had nothing to do for this long is stopped; its next event starts it again.',
  },
  sdkBotProcessesPerWorkspace: {
    env: 'PARLEY_SDK_BOT_PROCESSES_PER_WORKSPACE',
    flag: 'sdk-bot-processes-per-workspace',
    default: '5',
    description:
      'Of those processes, the most one workspace may hold at once; past it, its own process idle longest stops, or its event waits.',
  },
  sdkBotMemoryMb: {
    env: 'PARLEY_SDK_BOT_MEMORY_MB',
    flag: 'sdk-bot-memory-mb',
    default: '256',
    description:
      'Most memory a `bp deploy` bot process may hold, in MB (everything it allocates, its scratch files included), enforced by the kernel: past it the process is stopped and the event it handled fails.',
  },
  sdkBotCpu: {
    env: 'PARLEY_SDK_BOT_CPU',
    flag: 'sdk-bot-cpu',
    default: '0.5',
    description:
      'Most CPU a `bp deploy` bot process may use, in cores (`0.5`: half of one core), enforced by the kernel.',
  },
  sdkBotTimeoutSeconds: {
    env: 'PARLEY_SDK_BOT_TIMEOUT_SECONDS',
    flag: 'sdk-bot-timeout-seconds',
    default: '60',
    description:
      'Longest a `bp deploy` bot may take to handle one event (a bot’s own `maxExecutionTime` may be shorter, never longer); past it the process is stopped and the event fails.',
  },
  sdkBotInternet: {
    env: 'PARLEY_SDK_BOT_INTERNET',
    flag: 'sdk-bot-internet',
    default: 'on',
    description:
      '`on` or `off`: whether `bp deploy` bots and integrations may reach the public internet (through the server’s egress proxy). Loopback, private, link-local and other non-public addresses stay closed either way.',
  },
  sdkBotPrivateTargets: {
    env: 'PARLEY_SDK_BOT_PRIVATE_TARGETS',
    flag: 'sdk-bot-private-targets',
    description:
      'Comma-separated non-public addresses or networks `bp deploy` bots may reach nonetheless, each with an optional port: `10.0.0.5:8080`, `192.168.1.0/24`, `[fd00::1]:443`. Unset: none.',
  },
  devTunnel: {
    env: 'PARLEY_DEV_TUNNEL',
    flag: 'dev-tunnel',
    default: 'on',
    description:
      '`on` or `off`: whether `bp dev` may open its tunnel here (`bp dev --tunnel-url <this server>/dev-tunnel`), through which the server calls the developer’s local process for a dev bot’s events. Opening one needs no key (as with the hosted tunnel, its random id is the secret); a process holds at most 200.',
  },
  devBotPrivateTargets: {
    env: 'PARLEY_DEV_BOT_PRIVATE_TARGETS',
    flag: 'dev-bot-private-targets',
    default: 'off',
    description:
      '`on` or `off`: whether a dev bot’s `url` (the developer’s process, called for its events when it names no open tunnel) may be a loopback, private-network or link-local address. Off, as for outgoing webhooks, a workspace member cannot make the server call what only the server can reach; turn it on for a server on a developer’s own machine.',
  },
  botFetch: {
    env: 'PARLEY_BOT_FETCH',
    flag: 'bot-fetch',
    default: 'on',
    description:
      '`on` or `off`: whether `fetch` in the code of `parley deploy` bots may reach the public internet (the server makes each request). Loopback, private, link-local and other non-public addresses stay closed either way.',
  },
  botFetchPrivateTargets: {
    env: 'PARLEY_BOT_FETCH_PRIVATE_TARGETS',
    flag: 'bot-fetch-private-targets',
    description:
      'Comma-separated non-public addresses or networks that `fetch` in bot code may reach nonetheless, each with an optional port, as `PARLEY_SDK_BOT_PRIVATE_TARGETS`. Unset: none.',
  },
  trustProxy: {
    env: 'PARLEY_TRUST_PROXY',
    flag: 'trust-proxy',
    default: 'off',
    description:
      'The reverse proxies in front of this server, whose `X-Forwarded-For` names the client: `off`, a comma-separated list of their addresses and CIDR ranges (`10.0.0.0/8`, or `loopback`, `linklocal`, `uniquelocal`), or a number of hops. Rate limits, connection limits and logs then count the client, not the proxy.',
  },
  headersTimeoutSeconds: {
    env: 'PARLEY_HEADERS_TIMEOUT_SECONDS',
    flag: 'headers-timeout-seconds',
    default: '10',
    description:
      'A request’s headers (a new connection’s first ones too) must arrive within this; past it, 408 and the connection is closed.',
  },
  bodyTimeoutSeconds: {
    env: 'PARLEY_BODY_TIMEOUT_SECONDS',
    flag: 'body-timeout-seconds',
    default: '60',
    description:
      'A request’s whole body must arrive within this (a file’s upload excepted: the minimum rate alone bounds it); past it, 408 and the connection is closed.',
  },
  bodyMinBytesPerSecond: {
    env: 'PARLEY_BODY_MIN_BYTES_PER_SECOND',
    flag: 'body-min-bytes-per-second',
    default: '1024',
    description:
      'Rate a request body (a file’s upload too) must keep up on average since its headers came, after a head start as long as the headers’ timeout; one that falls behind is cut (408, connection closed).',
  },
  idleTimeoutSeconds: {
    env: 'PARLEY_IDLE_TIMEOUT_SECONDS',
    flag: 'idle-timeout-seconds',
    default: '60',
    description:
      'A connection on which nothing moves for this long is closed (an answer its client stopped reading); not while the server is still preparing an answer. Longer than the event streams’ ping interval.',
  },
  maxConnections: {
    env: 'PARLEY_MAX_CONNECTIONS',
    flag: 'max-connections',
    default: 'auto',
    description:
      'Connections open at once; past it new ones are closed at once. `auto`: half the descriptors left once the store’s, the bot processes’ and the server’s own are set aside (each connection may hold a file open). The log says the numbers at start.',
  },
  maxConnectionsPerAddress: {
    env: 'PARLEY_MAX_CONNECTIONS_PER_ADDRESS',
    flag: 'max-connections-per-address',
    default: '256',
    description:
      'Connections open at once from one client address (an IPv6 /64); past it new ones are closed at once. Behind a trusted proxy: requests in progress per client address, past it 429 `RateLimited`.',
  },
  rateLimits: {
    env: 'PARLEY_RATE_LIMITS',
    flag: 'rate-limits',
    default: 'on',
    description:
      '`on` or `off`: limits on the requests of each end user (Chat API, webchat) and each token (Runtime, Admin, Files APIs); past them, 429 `RateLimited` with `Retry-After`. Shared across processes through Redis when `REDIS_URL` is set.',
  },
  rateLimitChatPerMinute: {
    env: 'PARLEY_RATE_LIMIT_CHAT_PER_MINUTE',
    flag: 'rate-limit-chat-per-minute',
    default: '600',
    description: 'Requests a minute of one end user, once its user key is verified.',
  },
  rateLimitApiPerMinute: {
    env: 'PARLEY_RATE_LIMIT_API_PER_MINUTE',
    flag: 'rate-limit-api-per-minute',
    default: '12000',
    description:
      'Requests a minute of one token (a bot key or a personal access token) once verified, or to one bot’s webhook.',
  },
  rateLimitAddressPerMinute: {
    env: 'PARLEY_RATE_LIMIT_ADDRESS_PER_MINUTE',
    flag: 'rate-limit-address-per-minute',
    default: '6000',
    description:
      'Requests a minute from one client address (an IPv6 /64), to each API: every request to the Chat API and webchat; on the other APIs, those without a valid token or webhook (a made-up one counts here only).',
  },
  webhookPrivateTargets: {
    env: 'PARLEY_WEBHOOK_PRIVATE_TARGETS',
    flag: 'webhook-private-targets',
    default: 'off',
    description:
      '`on` or `off`: whether outgoing webhooks may be posted to loopback, private-network and link-local addresses (and the audio URLs of `transcribe-audio` read there). Off, a workspace member cannot make the server call what only the server can reach; turn it on when the receivers are on your own network.',
  },
  signalRetentionHours: {
    env: 'PARLEY_SIGNAL_RETENTION_HOURS',
    flag: 'signal-retention-hours',
    default: '24',
    description:
      'How long live signals are kept for listeners that reconnect (`Last-Event-ID`); one resuming from before gets a `signals_missed` frame.',
  },
  botLogRetentionDays: {
    env: 'PARLEY_BOT_LOG_RETENTION_DAYS',
    flag: 'bot-log-retention-days',
    default: '30',
    description: "How long bots' log lines are kept.",
  },
  botLogMaxLines: {
    env: 'PARLEY_BOT_LOG_MAX_LINES',
    flag: 'bot-log-max-lines',
    default: '100000',
    description: 'Log lines kept per bot, the newest (older ones are removed every ten minutes).',
  },
  corsOrigins: {
    env: 'PARLEY_CORS_ORIGINS',
    flag: 'cors-origins',
    description:
      'Comma-separated origins (`https://app.example.com`, or `*`) whose pages may call the Admin and Runtime APIs from a browser. Unset: none. Each bot sets its own for its Chat API and webchat.',
  },
  filesMaxSizeMb: {
    env: 'PARLEY_FILES_MAX_SIZE_MB',
    flag: 'files-max-size-mb',
    default: '100',
    description:
      'Largest file the Files API accepts, in MB (at most 2047). An upsert declaring more answers `LimitExceeded`; an upload of more bytes than declared is refused.',
  },
  filesBotStorageMb: {
    env: 'PARLEY_FILES_BOT_STORAGE_MB',
    flag: 'files-bot-storage-mb',
    default: '10240',
    description:
      'Storage limit of each bot’s files together, in MB; an upsert past it answers `QuotaExceeded`.',
  },
  redisUrl: {
    env: 'REDIS_URL',
    flag: 'redis-url',
    description:
      'A `redis://` URL (`redis://user:password@host:port` for a Redis ACL user, `rediss://` for TLS): live signals travel through Redis between processes. Unset on Postgres: through LISTEN/NOTIFY.',
  },
  busSecret: {
    env: 'PARLEY_BUS_SECRET',
    flag: 'bus-secret',
    description:
      'Secret that signs the live signals processes send each other (through Redis or PostgreSQL) and names their channel; every process of a deployment needs the same. At least 32 characters. Unset: one is generated at first start and kept in the store.',
  },
  llmBaseUrl: {
    env: 'PARLEY_LLM_BASE_URL',
    flag: 'llm-base-url',
    description:
      'The OpenAI-compatible endpoint that answers bots’ model calls (the Cognitive API and the `llm` integration), up to `/v1`: `http://127.0.0.1:11434/v1` for Ollama, `http://127.0.0.1:8080/v1` for llama.cpp’s server, `https://api.openai.com/v1`. It may be on loopback or a private network. Unset: model calls answer `LLM not configured`.',
  },
  llmPrivateTargets: {
    env: 'PARLEY_LLM_PRIVATE_TARGETS',
    flag: 'llm-private-targets',
    default: 'off',
    description:
      '`on` or `off`: whether the model providers workspaces add may be on loopback, private-network and link-local addresses (as for outgoing webhooks). Off, a workspace member cannot make the server call what only the server can reach; `PARLEY_LLM_BASE_URL` is the operator’s and may be anywhere.',
  },
  llmApiKey: {
    env: 'PARLEY_LLM_API_KEY',
    flag: 'llm-api-key',
    description:
      'Sent to `PARLEY_LLM_BASE_URL` as `Authorization: Bearer`; never logged nor shown in an error.',
  },
  llmBestModel: {
    env: 'PARLEY_LLM_BEST_MODEL',
    flag: 'llm-best-model',
    description:
      'The provider’s model id that answers `best` and `auto` (and model names of providers this server does not have).',
  },
  llmFastModel: {
    env: 'PARLEY_LLM_FAST_MODEL',
    flag: 'llm-fast-model',
    description: 'The provider’s model id that answers `fast`. Unset: `PARLEY_LLM_BEST_MODEL`.',
  },
  llmTranscriptionModel: {
    env: 'PARLEY_LLM_TRANSCRIPTION_MODEL',
    flag: 'llm-transcription-model',
    default: 'whisper-1',
    description:
      'The provider’s speech-to-text model that answers `transcribe-audio` (its `POST /audio/transcriptions`) for `auto`, `best` and `fast`: `whisper-1` on OpenAI, the Whisper model a vLLM, LocalAI or speaches server serves.',
  },
  embeddingsModel: {
    env: 'PARLEY_EMBEDDINGS_MODEL',
    flag: 'embeddings-model',
    description:
      'The model of the provider’s `POST /embeddings` that embeds the passages of indexed files (after their text is indexed), the searchable text of table rows (off their writes) and search queries, so that searchFiles and findTableRows rank by meaning as well as by words: `default:<model>` or a model id of `PARLEY_LLM_BASE_URL` as it names it (`text-embedding-3-small` on OpenAI, `nomic-embed-text` on Ollama). Its dimension is learned from its first answer and recorded with the vectors; a server started with another model embeds everything again in the background, search answering from the older vectors until it is done. Unset: full-text search alone.',
  },
  searchRanking: {
    env: 'PARLEY_SEARCH_RANKING',
    flag: 'search-ranking',
    default: 'hybrid',
    description:
      'How searchFiles and findTableRows rank once an embedding model is configured: `hybrid` (by words, BM25, and by meaning, the vectors, fused: 0.9 × the cosine similarity + 0.1 × the BM25 score over the best one), `words` (full-text alone) or `meaning` (the vectors alone, full-text while the query cannot be embedded). For comparing them on your own content: `npm run bench -- --scenarios retrieval` does on a generated one.',
  },
  vectorIndex: {
    env: 'PARLEY_VECTOR_INDEX',
    flag: 'vector-index',
    default: 'auto',
    description:
      "How searches by meaning find the vectors they rank: `auto` (the store's index: sqlite-vec on SQLite, a scan of binary signatures on PostgreSQL; then the nearest few hundred ranked exactly) or `exact` (every vector of the search compared: slower past a few thousand, for checking the index). docs/files.md says which runs where.",
  },
  vectorCacheMb: {
    env: 'PARLEY_VECTOR_CACHE_MB',
    flag: 'vector-cache-mb',
    default: '256',
    description:
      'The megabytes of stored vectors a server keeps in memory for searches by meaning (with their signatures), the least recently searched files let go first (256 hold 170,000 vectors of 384 dimensions). A search whose vectors are not held reads them from the database, a few milliseconds more. `0` holds none.',
  },
  llmTimeoutSeconds: {
    env: 'PARLEY_LLM_TIMEOUT_SECONDS',
    flag: 'llm-timeout-seconds',
    default: '120',
    description:
      'The longest a model call may take, fallbacks included (a stream too): past it the call answers 504 `OperationTimeout`.',
  },
  llmPrices: {
    env: 'PARLEY_LLM_PRICES',
    flag: 'llm-prices',
    description:
      'Prices of models in US dollars per million tokens, as JSON: `{"default:llama3.1": {"input": 0.1, "output": 0.3}}`, and of transcription models per minute of audio (`{"default:whisper-1": {"perMinute": 0.006}}`). They give the `cost` of each call; a model without a price costs 0.',
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type StoreConfig =
  | {
      kind: 'sqlite';
      file: string;
      regexTimeoutMs?: number;
      vectorIndex?: VectorIndexChoice;
      /** sqlite-vec's loadable file; absent: its npm package's for this platform. */
      vectorExtension?: string;
      /** The bytes of vectors kept in memory for searches (vectors/signature-cache.ts's default if absent). */
      vectorCacheBytes?: number;
    }
  | {
      kind: 'postgres';
      url: string;
      poolSize: number;
      statementTimeoutMs: number;
      vectorIndex?: VectorIndexChoice;
      /** The bytes of vectors kept in memory for searches (vectors/signature-cache.ts's default if absent). */
      vectorCacheBytes?: number;
    };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  store: StoreConfig;
  logLevel: LogLevel;
  adminToken: string | undefined;
  /** Undefined: the address the server listens on. */
  publicUrl: string | undefined;
  /** The origin file contents are served from; undefined: the public one. */
  contentUrl: string | undefined;
  chatEncryptionKey: string | undefined;
  chatPingIntervalMs: number;
  redisUrl: string | undefined;
  /** Undefined: the one the store keeps. */
  busSecret: string | undefined;
  sandboxProcesses: number;
  sandboxMaxMemoryMb: number;
  /** Bots deployed as `@botpress/sdk` bundles, each in a process of its own. */
  sdkBots: {
    maxProcesses: number;
    maxProcessesPerWorkspace: number;
    idleMs: number;
    memoryMb: number;
    cpuCores: number;
    callTimeoutMs: number;
    /** Public addresses reachable. */
    internet: boolean;
    /** Non-public addresses reachable nonetheless. */
    privateTargets: AddressList;
  };
  /** Dev bots (`bp dev`): served by the developer's process, through a tunnel or at their `url`. */
  devBots: DevBotOptions;
  /** Where `fetch` in Parley bots' code may go. */
  botFetch: {
    /** Public addresses reachable. */
    internet: boolean;
    /** Non-public addresses reachable nonetheless. */
    allowed: AddressList;
  };
  /** How long what piles up is kept. */
  retention: { signalsMs: number; botLogsMs: number; botLogLines: number };
  /** Requests a minute per caller; undefined: no limits. */
  rateLimits: { chatPerMinute: number; apiPerMinute: number; addressPerMinute: number } | undefined;
  /** How long a connection may take, and how many may be open. */
  connections: ConnectionSettings;
  /** Which peers are reverse proxies whose `X-Forwarded-For` is believed. */
  trustProxy: TrustProxy;
  engineConcurrency: number;
  /** Turns of one workspace at once while others run or wait (alone: all of `engineConcurrency`). */
  engineWorkspaceConcurrency: number;
  /** Turns that may wait on a model without holding a place of `engineConcurrency`. */
  engineWaitingTurns: number;
  /** Pending events one workspace may have before more are refused. */
  engineWorkspaceBacklog: number;
  /** Admission control: the queue's largest limit, and the wait it is made to keep; undefined: off. */
  admission: { backlog: number; waitMs: number } | undefined;
  /** Origins allowed to call the Admin and Runtime APIs from a browser; undefined: none. */
  corsOrigins: string[] | undefined;
  files: { maxFileBytes: number; botStorageBytes: number };
  llm: LlmOptions;
  /** How searches rank once an embedding model is configured. */
  searchRanking: SearchRanking;
  /** Outgoing webhooks may be posted to non-public addresses. */
  webhookPrivateTargets: boolean;
  /** Workspaces' model providers may be on non-public addresses. */
  llmPrivateTargets: boolean;
}

export interface DevBotOptions {
  /** `bp dev` may open its tunnel here. */
  tunnel: boolean;
  /** A dev bot's `url` may be a non-public address. */
  privateTargets: boolean;
}

export interface ConnectionSettings {
  headersTimeoutMs: number;
  bodyTimeoutMs: number;
  bodyMinBytesPerSecond: number;
  idleTimeoutMs: number;
  /** `auto`: from the descriptors the process may open (see `descriptors.ts`). */
  maxConnections: number | 'auto';
  maxConnectionsPerAddress: number;
}

/** An address range: `network/prefix` of one family. */
export interface Subnet {
  network: string;
  prefix: number;
  family: 'ipv4' | 'ipv6';
}

/**
 * The peers whose `X-Forwarded-For` is believed: none; the nearest `hops` (whoever connects is taken for
 * a proxy, so only where nothing else can reach the server); or those whose address is in `subnets`.
 */
export type TrustProxy =
  { kind: 'none' } | { kind: 'hops'; hops: number } | { kind: 'subnets'; subnets: Subnet[] };

/** Names of address ranges for PARLEY_TRUST_PROXY, as Express and Fastify (proxy-addr) know them. */
const NAMED_RANGES: Record<string, string[]> = {
  loopback: ['127.0.0.1/8', '::1/128'],
  linklocal: ['169.254.0.0/16', 'fe80::/10'],
  uniquelocal: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
};

export class ConfigError extends Error {}

type FlagOptions = Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>;

export interface ParsedArgs {
  /** Raw setting values by name, as given: flags win over environment variables (defaults come later). */
  values: Partial<Record<SettingName, string>>;
  /** Values of the command's own flags. */
  flags: Record<string, string | boolean | (string | boolean)[] | undefined>;
  positionals: string[];
}

export function parseCommandLine(
  argv: string[],
  env: NodeJS.ProcessEnv,
  commandFlags: FlagOptions = {},
): ParsedArgs {
  const options: FlagOptions = { ...commandFlags };
  for (const s of Object.values(SETTINGS)) options[s.flag] = { type: 'string' };
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (err) {
    throw new ConfigError((err as Error).message);
  }
  const values: Partial<Record<SettingName, string>> = {};
  for (const [name, setting] of settingEntries()) {
    const fromFlag = parsed.values[setting.flag];
    const raw = typeof fromFlag === 'string' ? fromFlag : env[setting.env];
    if (raw !== undefined && raw !== '') values[name] = raw;
  }
  const flags = Object.fromEntries(Object.keys(commandFlags).map((k) => [k, parsed.values[k]]));
  return { values, flags, positionals: parsed.positionals };
}

/** The values given, and each setting's default for the ones that are not: a default is written once, in SETTINGS. */
function withDefaults(values: Partial<Record<SettingName, string>>): Partial<Record<SettingName, string>> {
  const all: Partial<Record<SettingName, string>> = {};
  for (const [name, setting] of settingEntries()) {
    const value = values[name] ?? ('default' in setting ? setting.default : undefined);
    if (value !== undefined) all[name] = value;
  }
  return all;
}

function settingEntries(): [SettingName, Setting][] {
  return Object.entries(SETTINGS).flatMap(([name, setting]) =>
    isSettingName(name) ? [[name, setting] satisfies [SettingName, Setting]] : [],
  );
}

function isSettingName(name: string): name is SettingName {
  return name in SETTINGS;
}

export function buildConfig(given: Partial<Record<SettingName, string>>): Config {
  const values = withDefaults(given);
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${values.port}"`);
  }
  const logLevel = values.logLevel;
  if (!isLogLevel(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}"`);
  }
  const adminToken = values.adminToken;
  if (adminToken !== undefined && adminToken.length < 24) {
    throw new ConfigError('PARLEY_ADMIN_TOKEN must be at least 24 characters long');
  }
  const dataDir = path.resolve(required(values, 'dataDir'));
  const engineConcurrency = integerSetting(values, 'engineConcurrency');
  return {
    port,
    host: required(values, 'host'),
    dataDir,
    store: storeFrom(
      values.databaseUrl,
      dataDir,
      {
        regexTimeoutMs: integerSetting(values, 'sqliteRegexTimeoutMs'),
        vectorIndex: oneOf(values, 'vectorIndex', VECTOR_INDEX_CHOICES),
        ...(values.sqliteVecPath !== undefined && { vectorExtension: values.sqliteVecPath }),
        vectorCacheBytes: integerSetting(values, 'vectorCacheMb', 0) * 1024 * 1024,
      },
      {
        poolSize: integerSetting(values, 'postgresPoolSize'),
        statementTimeoutMs: integerSetting(values, 'postgresStatementTimeoutMs'),
        vectorIndex: oneOf(values, 'vectorIndex', VECTOR_INDEX_CHOICES),
        vectorCacheBytes: integerSetting(values, 'vectorCacheMb', 0) * 1024 * 1024,
      },
    ),
    logLevel,
    adminToken,
    publicUrl: values.publicUrl?.replace(/\/+$/, ''),
    contentUrl: contentOriginFrom(values.contentUrl, values.publicUrl),
    chatEncryptionKey: values.chatEncryptionKey,
    chatPingIntervalMs: integerSetting(values, 'chatPingIntervalMs'),
    redisUrl: redisFrom(values.redisUrl),
    busSecret: busSecretFrom(values.busSecret),
    sandboxProcesses: integerSetting(values, 'sandboxProcesses'),
    sandboxMaxMemoryMb: integerSetting(values, 'sandboxMaxMemoryMb'),
    sdkBots: {
      maxProcesses: integerSetting(values, 'sdkBotProcesses'),
      maxProcessesPerWorkspace: integerSetting(values, 'sdkBotProcessesPerWorkspace'),
      idleMs: integerSetting(values, 'sdkBotIdleSeconds') * 1000,
      memoryMb: integerSetting(values, 'sdkBotMemoryMb'),
      cpuCores: cores(values, 'sdkBotCpu'),
      callTimeoutMs: integerSetting(values, 'sdkBotTimeoutSeconds') * 1000,
      internet: onOff(values, 'sdkBotInternet'),
      privateTargets: addressList(values, 'sdkBotPrivateTargets'),
    },
    devBots: {
      tunnel: onOff(values, 'devTunnel'),
      privateTargets: onOff(values, 'devBotPrivateTargets'),
    },
    botFetch: {
      internet: onOff(values, 'botFetch'),
      allowed: addressList(values, 'botFetchPrivateTargets'),
    },
    retention: {
      signalsMs: integerSetting(values, 'signalRetentionHours') * 3600_000,
      botLogsMs: integerSetting(values, 'botLogRetentionDays') * 86_400_000,
      botLogLines: integerSetting(values, 'botLogMaxLines'),
    },
    rateLimits: rateLimitsFrom(values),
    connections: connectionsFrom(values, integerSetting(values, 'chatPingIntervalMs')),
    trustProxy: trustProxyFrom(required(values, 'trustProxy')),
    webhookPrivateTargets: onOff(values, 'webhookPrivateTargets'),
    llmPrivateTargets: onOff(values, 'llmPrivateTargets'),
    engineConcurrency,
    engineWorkspaceConcurrency: workspaceConcurrency(values, engineConcurrency),
    engineWaitingTurns: integerSetting(values, 'engineWaitingTurns'),
    engineWorkspaceBacklog: integerSetting(values, 'engineWorkspaceBacklog'),
    admission: onOff(values, 'admission')
      ? {
          backlog: integerSetting(values, 'admissionBacklog'),
          waitMs: integerSetting(values, 'admissionWaitMs'),
        }
      : undefined,
    corsOrigins: originsFrom(values.corsOrigins),
    files: {
      maxFileBytes: megabytes(values, 'filesMaxSizeMb', MAX_FILE_MB),
      botStorageBytes: megabytes(values, 'filesBotStorageMb'),
    },
    llm: llmFrom(values),
    searchRanking: oneOf(values, 'searchRanking', SEARCH_RANKINGS),
  };
}

/** A setting whose value is one of a closed set. */
function oneOf<T extends string>(
  values: Partial<Record<SettingName, string>>,
  name: SettingName,
  allowed: readonly T[],
): T {
  const value = required(values, name);
  const found = allowed.find((a) => a === value);
  if (found === undefined)
    throw new ConfigError(`${SETTINGS[name].env} must be one of ${allowed.join(', ')}, got "${value}"`);
  return found;
}

/** The server's model provider (none without a base URL) and what its calls may take and cost. */
function llmFrom(values: Partial<Record<SettingName, string>>): LlmOptions {
  const deadlineMs = integerSetting(values, 'llmTimeoutSeconds') * 1000;
  const prices = pricesFrom(values.llmPrices);
  const baseUrl = values.llmBaseUrl?.replace(/\/+$/, '');
  const embeddingsModel = embeddingsModelFrom(values.embeddingsModel);
  if (embeddingsModel !== undefined && baseUrl === undefined) {
    throw new ConfigError(
      'PARLEY_EMBEDDINGS_MODEL needs PARLEY_LLM_BASE_URL: the provider whose `/embeddings` answers it',
    );
  }
  if (baseUrl === undefined) return { provider: undefined, deadlineMs, prices };
  let url: URL;
  try {
    url = new URL(baseUrl);
  } catch {
    throw new ConfigError(`PARLEY_LLM_BASE_URL must be an http(s) URL, got "${baseUrl}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(`PARLEY_LLM_BASE_URL must be an http(s) URL, got "${baseUrl}"`);
  }
  const bestModel = values.llmBestModel;
  if (bestModel === undefined) {
    throw new ConfigError(
      'PARLEY_LLM_BEST_MODEL must be set with PARLEY_LLM_BASE_URL: the model that answers `best`',
    );
  }
  return {
    provider: {
      id: DEFAULT_PROVIDER,
      name: DEFAULT_PROVIDER,
      baseUrl,
      apiKey: values.llmApiKey,
      bestModel,
      fastModel: values.llmFastModel ?? bestModel,
      transcriptionModel: required(values, 'llmTranscriptionModel'),
      ...(embeddingsModel !== undefined && { embeddingsModel }),
    },
    deadlineMs,
    prices,
  };
}

/**
 * The embedding model, of the server's provider: `default:<model>`, or the provider's model id as it
 * is (Ollama's `nomic-embed-text:latest` has a colon of its own). A workspace's provider cannot be
 * named: the setting is the server's, for every workspace.
 */
function embeddingsModelFrom(raw: string | undefined): string | undefined {
  const ref = raw?.trim();
  if (ref === undefined || ref === '') return undefined;
  const model = ref.startsWith(`${DEFAULT_PROVIDER}:`) ? ref.slice(DEFAULT_PROVIDER.length + 1) : ref;
  if (model === '') throw new ConfigError(`PARLEY_EMBEDDINGS_MODEL names no model: "${ref}"`);
  return model;
}

function pricesFrom(raw: string | undefined): Record<string, ModelPrice> {
  if (raw === undefined) return {};
  const problem =
    'PARLEY_LLM_PRICES must be a JSON object of `{ "input": number, "output": number }` (or `{ "perMinute": number }` for a transcription model) by model';
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new ConfigError(problem);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError(problem);
  const prices: Record<string, ModelPrice> = {};
  for (const [model, value] of Object.entries(parsed)) {
    const price: unknown = value;
    const field = (name: string): unknown =>
      typeof price === 'object' && price !== null
        ? Object.getOwnPropertyDescriptor(price, name)?.value
        : undefined;
    const [input, output, perMinute] = [field('input'), field('output'), field('perMinute')];
    const isPrice = (n: unknown): n is number => typeof n === 'number' && n >= 0;
    const tokens = isPrice(input) && isPrice(output);
    const valid =
      (tokens || (input === undefined && output === undefined && perMinute !== undefined)) &&
      (perMinute === undefined || isPrice(perMinute));
    if (!valid) throw new ConfigError(`${problem}: "${model}" is not`);
    prices[model] = {
      input: tokens ? input : 0,
      output: tokens ? output : 0,
      ...(isPrice(perMinute) && { perMinute }),
    };
  }
  return prices;
}

function isLogLevel(value: string | undefined): value is LogLevel {
  return LOG_LEVELS.some((level) => level === value);
}

/** A setting that has a default, so always a value. */
function required(values: Partial<Record<SettingName, string>>, name: SettingName): string {
  const value = values[name];
  if (value === undefined) throw new ConfigError(`${SETTINGS[name].env} must be set`);
  return value;
}

/** `*`, or a comma-separated list of origins: scheme and host, as a browser sends them. */
function originsFrom(raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const origins = raw
    .split(',')
    .map((o) => o.trim())
    .filter((o) => o !== '');
  for (const origin of origins) {
    let valid = origin === '*';
    try {
      valid ||= new URL(origin).origin === origin;
    } catch {
      // not a URL: invalid
    }
    if (!valid) {
      throw new ConfigError(
        `PARLEY_CORS_ORIGINS takes origins such as https://app.example.com (no path), or *; got "${origin}"`,
      );
    }
  }
  return origins;
}

/** An http(s) origin, and not the public one: contents there must not share an origin with the console. */
function contentOriginFrom(raw: string | undefined, publicUrl: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const url = URL.canParse(raw) ? new URL(raw) : undefined;
  const origin =
    url && /^https?:$/.test(url.protocol) && `${url.origin}/` === url.href ? url.origin : undefined;
  if (origin === undefined) {
    throw new ConfigError(
      `PARLEY_CONTENT_URL takes an origin such as https://files.example.net (no path), got "${raw}"`,
    );
  }
  if (publicUrl !== undefined && URL.canParse(publicUrl) && new URL(publicUrl).origin === origin) {
    throw new ConfigError('PARLEY_CONTENT_URL must be another origin than PARLEY_PUBLIC_URL');
  }
  return origin;
}

/** Turns of one workspace at once: as set (at most all of them), or three quarters of them. */
function workspaceConcurrency(values: Partial<Record<SettingName, string>>, concurrency: number): number {
  if (values.engineWorkspaceConcurrency === undefined) return Math.ceil((concurrency * 3) / 4);
  const perWorkspace = integerSetting(values, 'engineWorkspaceConcurrency');
  if (perWorkspace > concurrency) {
    throw new ConfigError(
      `${SETTINGS.engineWorkspaceConcurrency.env} (${perWorkspace}) may not be more than ${SETTINGS.engineConcurrency.env} (${concurrency})`,
    );
  }
  return perWorkspace;
}

function onOff(values: Partial<Record<SettingName, string>>, name: SettingName): boolean {
  const switched = required(values, name);
  if (switched !== 'on' && switched !== 'off')
    throw new ConfigError(`${SETTINGS[name].env} must be on or off, got "${switched}"`);
  return switched === 'on';
}

function rateLimitsFrom(values: Partial<Record<SettingName, string>>): Config['rateLimits'] {
  if (!onOff(values, 'rateLimits')) return undefined;
  return {
    chatPerMinute: integerSetting(values, 'rateLimitChatPerMinute'),
    apiPerMinute: integerSetting(values, 'rateLimitApiPerMinute'),
    addressPerMinute: integerSetting(values, 'rateLimitAddressPerMinute'),
  };
}

function connectionsFrom(
  values: Partial<Record<SettingName, string>>,
  pingIntervalMs: number,
): ConnectionSettings {
  const idleTimeoutMs = integerSetting(values, 'idleTimeoutSeconds') * 1000;
  // An event stream is kept moving by its pings: one idle longer than the timeout would be closed.
  if (idleTimeoutMs <= pingIntervalMs) {
    throw new ConfigError(
      `${SETTINGS.idleTimeoutSeconds.env} must be longer than ${SETTINGS.chatPingIntervalMs.env} (${pingIntervalMs} ms), or event streams would be closed between their pings`,
    );
  }
  const maxConnections = required(values, 'maxConnections');
  return {
    headersTimeoutMs: integerSetting(values, 'headersTimeoutSeconds') * 1000,
    bodyTimeoutMs: integerSetting(values, 'bodyTimeoutSeconds') * 1000,
    bodyMinBytesPerSecond: integerSetting(values, 'bodyMinBytesPerSecond'),
    idleTimeoutMs,
    maxConnections: maxConnections === 'auto' ? 'auto' : integerSetting(values, 'maxConnections'),
    maxConnectionsPerAddress: integerSetting(values, 'maxConnectionsPerAddress'),
  };
}

function trustProxyFrom(raw: string): TrustProxy {
  const { env } = SETTINGS.trustProxy;
  if (raw === 'off') return { kind: 'none' };
  if (/^\d+$/.test(raw)) {
    const hops = Number(raw);
    if (hops < 1) throw new ConfigError(`${env}: a number of hops is at least 1 (or off), got "${raw}"`);
    return { kind: 'hops', hops };
  }
  if (raw === 'on' || raw === 'true') {
    throw new ConfigError(
      `${env}: trusting every peer would let any client choose its address; give the proxies' addresses (or a number of hops, where only the proxy can reach this server)`,
    );
  }
  const items = raw
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
  return { kind: 'subnets', subnets: items.flatMap((item) => (NAMED_RANGES[item] ?? [item]).map(subnetOf)) };
}

function subnetOf(text: string): Subnet {
  const [network = '', prefixText, ...rest] = text.split('/');
  const version = isIP(network);
  const bits = version === 4 ? 32 : 128;
  const prefix = prefixText === undefined ? bits : Number(prefixText);
  if (version === 0 || rest.length > 0 || !Number.isInteger(prefix) || prefix < 0 || prefix > bits) {
    throw new ConfigError(
      `${SETTINGS.trustProxy.env} takes off, a number of hops, or addresses and CIDR ranges (10.0.0.1, 10.0.0.0/8, fd00::/8, loopback, linklocal, uniquelocal); got "${text}"`,
    );
  }
  return { network, prefix, family: version === 4 ? 'ipv4' : 'ipv6' };
}

/** A setting's whole number: at least 1, or at least 0 where `least` is 0 (0 meaning none). */
function integerSetting(
  values: Partial<Record<SettingName, string>>,
  name: SettingName,
  least: 0 | 1 = 1,
): number {
  const raw = required(values, name);
  const value = Number(raw);
  if (!Number.isInteger(value) || value < least)
    throw new ConfigError(
      `${SETTINGS[name].env} must be ${least === 0 ? '0 or ' : ''}a positive integer, got "${raw}"`,
    );
  return value;
}

/** A share of the machine's CPU, in cores: above 0, at most 64. */
function cores(values: Partial<Record<SettingName, string>>, name: SettingName): number {
  const raw = required(values, name);
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > 64)
    throw new ConfigError(
      `${SETTINGS[name].env} must be a number of cores above 0 and at most 64, got "${raw}"`,
    );
  return value;
}

function addressList(values: Partial<Record<SettingName, string>>, name: SettingName): AddressList {
  try {
    return parseAddressList(values[name] ?? '');
  } catch (err) {
    throw new ConfigError(`${SETTINGS[name].env}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

/** Sizes are stored as 32-bit integers: a file is at most 2047 MB. */
const MAX_FILE_MB = 2047;

/** A size setting in MB (fractions allowed, for small test limits), as bytes. */
function megabytes(
  values: Partial<Record<SettingName, string>>,
  name: SettingName,
  max = Number.MAX_SAFE_INTEGER / 1024 / 1024,
): number {
  const raw = required(values, name);
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0 || value > max) {
    throw new ConfigError(
      `${SETTINGS[name].env} must be a number of MB above 0 and at most ${max}, got "${raw}"`,
    );
  }
  return Math.floor(value * 1024 * 1024);
}

function redisFrom(url: string | undefined): string | undefined {
  if (url !== undefined && !/^rediss?:\/\//.test(url))
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  return url;
}

/** Enough to be a secret: 32 characters, as of `openssl rand -base64 32` (44) or a UUID (36). */
const MIN_BUS_SECRET_LENGTH = 32;

function busSecretFrom(secret: string | undefined): string | undefined {
  if (secret !== undefined && secret.length < MIN_BUS_SECRET_LENGTH)
    throw new ConfigError(`PARLEY_BUS_SECRET must be at least ${MIN_BUS_SECRET_LENGTH} characters long`);
  return secret;
}

function storeFrom(
  databaseUrl: string | undefined,
  dataDir: string,
  sqlite: {
    regexTimeoutMs: number;
    vectorIndex: VectorIndexChoice;
    vectorExtension?: string;
    vectorCacheBytes: number;
  },
  postgres: {
    poolSize: number;
    statementTimeoutMs: number;
    vectorIndex: VectorIndexChoice;
    vectorCacheBytes: number;
  },
): StoreConfig {
  if (!databaseUrl) return { kind: 'sqlite', file: path.join(dataDir, 'parley.db'), ...sqlite };
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return { kind: 'postgres', url: databaseUrl, ...postgres };
  if (databaseUrl.startsWith('sqlite:')) {
    return { kind: 'sqlite', file: path.resolve(databaseUrl.slice('sqlite:'.length)), ...sqlite };
  }
  throw new ConfigError('DATABASE_URL must start with postgres://, postgresql:// or sqlite:');
}

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  return buildConfig(parseCommandLine(argv, env).values);
}

/** The settings as the usage text lists them, generated from SETTINGS. */
export function settingsUsage(): string {
  return settingEntries()
    .map(([, s]) => {
      const fallback = 'default' in s ? `, default ${s.default}` : '';
      return `  --${s.flag} <value>   (${s.env}${fallback})\n      ${s.description}`;
    })
    .join('\n');
}
