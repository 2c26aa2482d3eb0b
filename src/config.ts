import { parseArgs } from 'node:util';
import path from 'node:path';

/**
 * Every setting of a Parley process, read once from flags and the environment.
 * The README's configuration table lists exactly these entries (a test checks it).
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
  sdkBotMemoryMb: {
    env: 'PARLEY_SDK_BOT_MEMORY_MB',
    flag: 'sdk-bot-memory-mb',
    default: '256',
    description:
      'Most resident memory a `bp deploy` bot process may hold, in MB (buffers included); past it the process is stopped and the event it handled fails.',
  },
  sdkBotTimeoutSeconds: {
    env: 'PARLEY_SDK_BOT_TIMEOUT_SECONDS',
    flag: 'sdk-bot-timeout-seconds',
    default: '60',
    description:
      'Longest a `bp deploy` bot may take to handle one event (unless the bot sets its own `maxExecutionTime`); past it the process is stopped and the event fails.',
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
    description: 'Requests a minute of one end user (its user key, or its address before it has one).',
  },
  rateLimitApiPerMinute: {
    env: 'PARLEY_RATE_LIMIT_API_PER_MINUTE',
    flag: 'rate-limit-api-per-minute',
    default: '12000',
    description:
      'Requests a minute of one token (a bot key or a personal access token), or to one bot’s webhook.',
  },
  webhookPrivateTargets: {
    env: 'PARLEY_WEBHOOK_PRIVATE_TARGETS',
    flag: 'webhook-private-targets',
    default: 'off',
    description:
      '`on` or `off`: whether outgoing webhooks may be posted to loopback, private-network and link-local addresses. Off, a workspace member cannot make the server call what only the server can reach; turn it on when the receivers are on your own network.',
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
      'A `redis://` URL: live signals travel through Redis between processes. Unset on Postgres: through LISTEN/NOTIFY.',
  },
} as const satisfies Record<string, Setting>;

export type SettingName = keyof typeof SETTINGS;

export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

export type StoreConfig =
  | { kind: 'sqlite'; file: string }
  | { kind: 'postgres'; url: string; poolSize: number; statementTimeoutMs: number };

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  store: StoreConfig;
  logLevel: LogLevel;
  adminToken: string | undefined;
  /** Undefined: the address the server listens on. */
  publicUrl: string | undefined;
  chatEncryptionKey: string | undefined;
  chatPingIntervalMs: number;
  redisUrl: string | undefined;
  sandboxProcesses: number;
  sandboxMaxMemoryMb: number;
  /** Bots deployed as `@botpress/sdk` bundles, each in a process of its own. */
  sdkBots: { maxProcesses: number; idleMs: number; memoryMb: number; callTimeoutMs: number };
  /** How long what piles up is kept. */
  retention: { signalsMs: number; botLogsMs: number; botLogLines: number };
  /** Requests a minute per caller; undefined: no limits. */
  rateLimits: { chatPerMinute: number; apiPerMinute: number } | undefined;
  engineConcurrency: number;
  /** Origins allowed to call the Admin and Runtime APIs from a browser; undefined: none. */
  corsOrigins: string[] | undefined;
  files: { maxFileBytes: number; botStorageBytes: number };
  /** Outgoing webhooks may be posted to non-public addresses. */
  webhookPrivateTargets: boolean;
}

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
  return {
    port,
    host: required(values, 'host'),
    dataDir,
    store: storeFrom(values.databaseUrl, dataDir, {
      poolSize: positiveInteger(values, 'postgresPoolSize'),
      statementTimeoutMs: positiveInteger(values, 'postgresStatementTimeoutMs'),
    }),
    logLevel,
    adminToken,
    publicUrl: values.publicUrl?.replace(/\/+$/, ''),
    chatEncryptionKey: values.chatEncryptionKey,
    chatPingIntervalMs: positiveInteger(values, 'chatPingIntervalMs'),
    redisUrl: redisFrom(values.redisUrl),
    sandboxProcesses: positiveInteger(values, 'sandboxProcesses'),
    sandboxMaxMemoryMb: positiveInteger(values, 'sandboxMaxMemoryMb'),
    sdkBots: {
      maxProcesses: positiveInteger(values, 'sdkBotProcesses'),
      idleMs: positiveInteger(values, 'sdkBotIdleSeconds') * 1000,
      memoryMb: positiveInteger(values, 'sdkBotMemoryMb'),
      callTimeoutMs: positiveInteger(values, 'sdkBotTimeoutSeconds') * 1000,
    },
    retention: {
      signalsMs: positiveInteger(values, 'signalRetentionHours') * 3600_000,
      botLogsMs: positiveInteger(values, 'botLogRetentionDays') * 86_400_000,
      botLogLines: positiveInteger(values, 'botLogMaxLines'),
    },
    rateLimits: rateLimitsFrom(values),
    webhookPrivateTargets: onOff(values, 'webhookPrivateTargets'),
    engineConcurrency: positiveInteger(values, 'engineConcurrency'),
    corsOrigins: originsFrom(values.corsOrigins),
    files: {
      maxFileBytes: megabytes(values, 'filesMaxSizeMb', MAX_FILE_MB),
      botStorageBytes: megabytes(values, 'filesBotStorageMb'),
    },
  };
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

function onOff(values: Partial<Record<SettingName, string>>, name: SettingName): boolean {
  const switched = required(values, name);
  if (switched !== 'on' && switched !== 'off')
    throw new ConfigError(`${SETTINGS[name].env} must be on or off, got "${switched}"`);
  return switched === 'on';
}

function rateLimitsFrom(values: Partial<Record<SettingName, string>>): Config['rateLimits'] {
  if (!onOff(values, 'rateLimits')) return undefined;
  return {
    chatPerMinute: positiveInteger(values, 'rateLimitChatPerMinute'),
    apiPerMinute: positiveInteger(values, 'rateLimitApiPerMinute'),
  };
}

function positiveInteger(values: Partial<Record<SettingName, string>>, name: SettingName): number {
  const raw = required(values, name);
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigError(`${SETTINGS[name].env} must be a positive integer, got "${raw}"`);
  return value;
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

function storeFrom(
  databaseUrl: string | undefined,
  dataDir: string,
  postgres: { poolSize: number; statementTimeoutMs: number },
): StoreConfig {
  if (!databaseUrl) return { kind: 'sqlite', file: path.join(dataDir, 'parley.db') };
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return { kind: 'postgres', url: databaseUrl, ...postgres };
  if (databaseUrl.startsWith('sqlite:')) {
    return { kind: 'sqlite', file: path.resolve(databaseUrl.slice('sqlite:'.length)) };
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
