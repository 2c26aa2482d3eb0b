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
    default: '30000',
    description: 'Interval of the `data: ping` keep-alive frame on Chat API event streams, in milliseconds.',
  },
  sandboxProcesses: {
    env: 'PARLEY_SANDBOX_PROCESSES',
    flag: 'sandbox-processes',
    default: '1',
    description: 'Sandbox processes that run bot code (isolated-vm isolates, one per deployed bot version).',
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

export type StoreConfig = { kind: 'sqlite'; file: string } | { kind: 'postgres'; url: string };

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
}

export class ConfigError extends Error {}

type FlagOptions = Record<string, { type: 'string' | 'boolean'; short?: string }>;

export interface ParsedArgs {
  /** Raw setting values by name: flags win over environment variables, which win over defaults. */
  values: Partial<Record<SettingName, string>>;
  /** Values of the command's own flags. */
  flags: Record<string, string | boolean | undefined>;
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
  for (const [name, setting] of Object.entries(SETTINGS) as [SettingName, Setting][]) {
    const fromFlag = parsed.values[setting.flag];
    const raw = typeof fromFlag === 'string' ? fromFlag : env[setting.env] || setting.default;
    if (raw !== undefined && raw !== '') values[name] = raw;
  }
  const flags = Object.fromEntries(Object.keys(commandFlags).map((k) => [k, parsed.values[k]]));
  return { values, flags, positionals: parsed.positionals };
}

export function buildConfig(values: Partial<Record<SettingName, string>>): Config {
  const port = Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    throw new ConfigError(`PORT must be an integer from 0 to 65535, got "${values.port}"`);
  }
  const host = values.host ?? '127.0.0.1';
  const dataDir = path.resolve(values.dataDir ?? './data');
  const logLevel = (values.logLevel ?? 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${values.logLevel}"`);
  }
  const adminToken = values.adminToken;
  if (adminToken !== undefined && adminToken.length < 24) {
    throw new ConfigError('PARLEY_ADMIN_TOKEN must be at least 24 characters long');
  }
  return {
    port,
    host,
    dataDir,
    store: storeFrom(values.databaseUrl, dataDir),
    logLevel,
    adminToken,
    publicUrl: values.publicUrl?.replace(/\/+$/, ''),
    chatEncryptionKey: values.chatEncryptionKey,
    chatPingIntervalMs: positiveInteger('PARLEY_CHAT_PING_INTERVAL_MS', values.chatPingIntervalMs ?? '30000'),
    redisUrl: redisFrom(values.redisUrl),
    sandboxProcesses: positiveInteger('PARLEY_SANDBOX_PROCESSES', values.sandboxProcesses ?? '1'),
  };
}

function positiveInteger(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1)
    throw new ConfigError(`${name} must be a positive integer, got "${raw}"`);
  return value;
}

function redisFrom(url: string | undefined): string | undefined {
  if (url !== undefined && !/^rediss?:\/\//.test(url))
    throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  return url;
}

function storeFrom(databaseUrl: string | undefined, dataDir: string): StoreConfig {
  if (!databaseUrl) return { kind: 'sqlite', file: path.join(dataDir, 'parley.db') };
  if (/^postgres(ql)?:\/\//.test(databaseUrl)) return { kind: 'postgres', url: databaseUrl };
  if (databaseUrl.startsWith('sqlite:')) {
    return { kind: 'sqlite', file: path.resolve(databaseUrl.slice('sqlite:'.length)) };
  }
  throw new ConfigError('DATABASE_URL must start with postgres://, postgresql:// or sqlite:');
}

export function loadConfig(argv: string[], env: NodeJS.ProcessEnv = process.env): Config {
  return buildConfig(parseCommandLine(argv, env).values);
}
