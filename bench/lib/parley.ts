import { randomBytes } from 'node:crypto';
import { cp, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { HEADERS } from '../../src/contract/headers.ts';
import { adminApi } from './api.ts';
import { adopt, descendantsOf, SERVER_CPU, start, stop } from './procs.ts';
import type { Started } from './procs.ts';
import { createSchema, postgresProblem as checkPostgres } from '../../test/helpers/stores.ts';

export const ROOT = path.resolve(import.meta.dirname, '..', '..');
const PARLEY_BIN = path.join(ROOT, 'bin', 'parley.js');
export const POSTGRES_URL = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const ADMIN_TOKEN = `bp_pat_bench_${randomBytes(18).toString('hex')}`;

export type StoreName = 'sqlite' | 'postgres';

export interface ParleyServer {
  store: StoreName;
  url: string;
  token: string;
  workspaceId: string;
  proc: Started;
  /** Parley's processes: the server and its sandbox process(es). */
  pids(): number[];
  stop(): Promise<void>;
}

/** Whether Postgres answers; the reason when it does not. */
export function postgresProblem(): Promise<string | undefined> {
  return checkPostgres(POSTGRES_URL);
}

/** An OpenAI-compatible endpoint for Parley's LLM gateway, and the model ids that answer `best` and `fast`. */
export interface LlmProvider {
  /** Up to `/v1`. */
  url: string;
  models: { best: string; fast: string };
}

/** The settings that point `parley serve`'s LLM gateway at `provider` (see docs/llm.md). */
export function llmSettings(provider: LlmProvider): Record<string, string> {
  return {
    PARLEY_LLM_BASE_URL: provider.url,
    PARLEY_LLM_BEST_MODEL: provider.models.best,
    PARLEY_LLM_FAST_MODEL: provider.models.fast,
  };
}

/**
 * Where a server keeps its data: a temp DATA_DIR and, on Postgres, a schema of its own. Made by
 * startParley for each server, or beforehand (`parleyData`) for servers that follow one another on the
 * same data.
 */
export interface ParleyData {
  dataDir: string;
  /** Postgres's; undefined on SQLite. */
  databaseUrl: string | undefined;
  /** The workspace its first server created (a server started again on it says nothing of it). */
  workspaceId?: string;
  remove(): Promise<void>;
}

export async function parleyData(store: StoreName): Promise<ParleyData> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'parley-bench-'));
  let schema: Awaited<ReturnType<typeof createSchema>> | undefined;
  const remove = async () => {
    await schema?.drop().catch(() => {});
    await rm(dataDir, { recursive: true, force: true });
  };
  try {
    if (store === 'postgres') schema = await createSchema(POSTGRES_URL, 'bench');
  } catch (err) {
    await remove();
    throw err;
  }
  return { dataDir, databaseUrl: schema?.url, remove };
}

/**
 * Runs `parley serve` as a user would (LOG_LEVEL=warn, port 0), pinned to the server core, on `data`
 * (kept when the server stops), or on data of its own (removed when it stops).
 */
export async function startParley(
  store: StoreName,
  nodeArgs: string[] = [],
  extraEnv: Record<string, string> = {},
  data?: ParleyData,
): Promise<ParleyServer> {
  let own: ParleyData | undefined;
  let proc: Started | undefined;
  const cleanup = async () => {
    if (proc) await stop(proc.pid, 10_000);
    await own?.remove();
  };
  try {
    const used = data ?? (own = await parleyData(store));
    const { dataDir, databaseUrl } = used;
    // A server started again on its data prints nothing: it is given a port, and asked when it is ready.
    const port = used.workspaceId === undefined ? 0 : await freePort();
    const env: Record<string, string> = {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      PARLEY_ADMIN_TOKEN: ADMIN_TOKEN,
      // The benchmarks measure the server, not its limiter.
      PARLEY_RATE_LIMITS: 'off',
      // The load generator is one address, with a connection for each of thousands of listeners.
      PARLEY_MAX_CONNECTIONS_PER_ADDRESS: '100000',
      ...(databaseUrl !== undefined && { DATABASE_URL: databaseUrl }),
      ...extraEnv,
    };
    const server = start(
      `parley serve (${store})`,
      process.execPath,
      [...nodeArgs, PARLEY_BIN, 'serve', '--port', String(port)],
      {
        cwd: ROOT,
        env,
        cpu: SERVER_CPU,
      },
    );
    proc = server;
    let url = `http://127.0.0.1:${port}`;
    if (used.workspaceId === undefined) {
      [, used.workspaceId] = await server.waitFor(/workspace id: (\S+)/, 60_000);
      [, url = url] = await server.waitFor(/(http:\/\/127\.0\.0\.1:\d+)\/v1\/admin\/bots/);
    } else await untilReady(url, 60_000);
    const { workspaceId } = used;
    if (workspaceId === undefined) throw new Error('parley serve did not say its workspace');
    const sandboxes = new Set<number>();
    return {
      store,
      url,
      token: ADMIN_TOKEN,
      workspaceId,
      proc: server,
      pids: () => {
        for (const pid of descendantsOf(server.pid)) {
          sandboxes.add(pid);
          adopt(pid, `parley sandbox ${pid}`);
        }
        return [server.pid, ...sandboxes];
      },
      stop: cleanup,
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** A port nothing listens on now. */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}

async function untilReady(url: string, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ready = await fetch(`${url}/readyz`).then(
      (res) => res.ok,
      () => false,
    );
    if (ready) return;
    if (Date.now() > until) throw new Error(`${url} was not ready within ${timeoutMs / 1000} s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface Deployed {
  botId: string;
  chatUrl: string;
}

/** `parley deploy <dir>` with PARLEY_URL, PARLEY_TOKEN and PARLEY_WORKSPACE_ID, as the README shows. */
export async function deploy(server: ParleyServer, dir: string): Promise<Deployed> {
  const proc = start(`parley deploy ${path.basename(dir)}`, process.execPath, [PARLEY_BIN, 'deploy', dir], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? os.tmpdir(),
      PARLEY_URL: server.url,
      PARLEY_TOKEN: server.token,
      PARLEY_WORKSPACE_ID: server.workspaceId,
    },
  });
  const code = await proc.exited;
  const output = proc.output();
  const botId = /\bbot (bot_\S+)/.exec(output)?.[1];
  const chatUrl = /^Chat webhook URL: (\S+)$/m.exec(output)?.[1];
  if (code !== 0 || !botId || !chatUrl) throw new Error(`parley deploy ${dir} exited ${code}:\n${output}`);
  return { botId, chatUrl };
}

/** A copy of examples/action-bot without its cache: every call runs the action's code in the sandbox. */
export async function uncachedActionBot(): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-bench-bot-'));
  await cp(path.join(ROOT, 'examples', 'action-bot'), dir, { recursive: true });
  const manifest = JSON.parse(await readFile(path.join(dir, 'bot.json'), 'utf8')) as Record<string, unknown>;
  manifest.name = 'action-bot-uncached';
  delete manifest.$schema;
  await writeFile(path.join(dir, 'bot.json'), JSON.stringify(manifest, null, 2));
  const actionFile = path.join(dir, 'actions', 'textStats.json');
  const action = JSON.parse(await readFile(actionFile, 'utf8')) as Record<string, unknown>;
  delete action.cacheable;
  delete action.$schema;
  await writeFile(actionFile, JSON.stringify(action, null, 2));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/**
 * A bot whose every message is answered by an `aiGenerate` card calling `model` (the AI-turn scenario):
 * the reply is the model's text, `echo: <the message>` from the bench's provider.
 */
export async function aiTurnBot(model: string): Promise<{ dir: string; remove(): Promise<void> }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'parley-bench-ai-bot-'));
  await writeFile(path.join(dir, 'bot.json'), JSON.stringify({ formatVersion: 1, name: 'ai-turn-bot' }));
  await mkdir(path.join(dir, 'workflows'));
  const nodes = [
    { id: 'start', type: 'start', next: [{ to: 'answer' }] },
    {
      id: 'answer',
      type: 'standard',
      cards: [{ type: 'aiGenerate', instructions: 'Answer in one line.', model }],
    },
  ];
  await writeFile(path.join(dir, 'workflows', 'main.json'), JSON.stringify({ nodes }));
  return { dir, remove: () => rm(dir, { recursive: true, force: true }) };
}

/** The owner's credentials in the first workspace: the Admin API's headers. */
export const ownerHeaders = (server: ParleyServer): Record<string, string> => ({
  [HEADERS.authorization]: `Bearer ${server.token}`,
  [HEADERS.workspaceId]: server.workspaceId,
});

/** The Admin API as the owner, in the first workspace. */
export const ownerAdmin = (server: ParleyServer) => adminApi(server.url, ownerHeaders(server));

/** A bot API key (createBotApiKey), the credential of the Runtime API's action call. */
export async function botApiKey(server: ParleyServer, botId: string): Promise<string> {
  return (await ownerAdmin(server).createBotApiKey({ botId, note: 'bench' })).value;
}

/** A bot's credentials, as the Runtime, Files, Tables and Cognitive APIs take them. */
export const botHeadersOf = (botId: string, key: string): Record<string, string> => ({
  [HEADERS.authorization]: `Bearer ${key}`,
  [HEADERS.botId]: botId,
});

/** A chat user and a conversation, through the Chat API: what the fan-out listeners share. */
export { chatUserAndConversation } from './chat-api.ts';
