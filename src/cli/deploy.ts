import { stat } from 'node:fs/promises';
import path from 'node:path';
import { parseCommandLine } from '../config.ts';
import type { Bot, CreateBotBody, UpdateBotBody } from '../domain/bots.ts';
import type { CompiledPackage } from '../engine/package/format.ts';
import { loadPackage, PackageError } from '../engine/package/load.ts';
import { formatProblem } from '../engine/package/problems.ts';
import { CliError } from './errors.ts';

const DEFAULT_URL = 'http://127.0.0.1:3000';

/** Loads and compiles a package; on problems prints every one of them (paths as given) and returns undefined. */
async function compileOrReport(dir: string, doing: string): Promise<CompiledPackage | undefined> {
  if (!(await stat(dir).catch(() => undefined))?.isDirectory()) throw new CliError(`${dir} is not a folder`);
  try {
    return await loadPackage(dir);
  } catch (err) {
    if (!(err instanceof PackageError)) throw err;
    const count = err.problems.length === 1 ? '1 problem' : `${err.problems.length} problems`;
    process.stderr.write(`parley: ${dir} has ${count}${doing}:\n`);
    for (const problem of err.problems) {
      process.stderr.write(`  ${formatProblem(problem, path.join(dir, problem.file))}\n`);
    }
    return undefined;
  }
}

export async function validateCommand(argv: string[]): Promise<number> {
  const { positionals } = parseCommandLine(argv, process.env);
  const dir = positionals[0];
  if (!dir || positionals.length > 1) throw new CliError('usage: parley validate <dir>');
  const compiled = await compileOrReport(dir, '');
  if (!compiled) return 1;
  const count = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
  const hooks = Object.values(compiled.hooks).reduce((n, ids) => n + ids.length, 0);
  const counts = [
    count(Object.keys(compiled.workflows).length, 'workflow'),
    count(Object.keys(compiled.actions).length, 'action'),
    count(hooks, 'hook'),
    count(Object.keys(compiled.units).length, 'code unit'),
  ];
  process.stdout.write(`OK: ${compiled.manifest.name}: ${counts.join(', ')}\n`);
  return 0;
}

/** The Admin API over Node's fetch: the CLI runs without the dev dependencies (no @botpress/client). */
class AdminApi {
  constructor(
    private readonly url: string,
    private readonly token: string,
    private readonly workspaceId: string,
  ) {}

  async request<T>(method: 'GET' | 'POST' | 'PUT', route: string, body?: unknown): Promise<T> {
    const url = `${this.url.replace(/\/+$/, '')}/v1/admin${route}`;
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers: {
          authorization: `Bearer ${this.token}`,
          'x-workspace-id': this.workspaceId,
          ...(body !== undefined && { 'content-type': 'application/json' }),
        },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    } catch (err) {
      const cause = (err as { cause?: { message?: string } }).cause?.message ?? (err as Error).message;
      throw new CliError(`cannot reach ${this.url}: ${cause}`);
    }
    const text = await response.text();
    let answer: unknown;
    try {
      answer = text ? JSON.parse(text) : undefined;
    } catch {
      answer = undefined;
    }
    if (!response.ok) {
      const error = answer as { type?: unknown; message?: unknown } | undefined;
      if (typeof error?.type === 'string' && typeof error.message === 'string') {
        throw new CliError(`${error.type}: ${error.message}`);
      }
      throw new CliError(`${method} ${url} answered HTTP ${response.status}`);
    }
    return answer as T;
  }
}

type DeployedBot = Pick<
  Bot,
  'id' | 'name' | 'integrations' | 'secrets' | 'actions' | 'events' | 'configuration'
>;

/**
 * The bot's definition from the package: the compiled package as its code, and what the Admin API
 * shows of it (actions, event types, configuration). The update maps are merged by the server, so
 * actions and events the package no longer has are removed with `null`.
 */
function botDefinition(pkg: CompiledPackage, current?: DeployedBot) {
  const { manifest } = pkg;
  const removed = (names: string[] | undefined, kept: Record<string, unknown>) =>
    Object.fromEntries((names ?? []).filter((n) => !(n in kept)).map((n) => [n, null]));
  const actions = Object.fromEntries(
    Object.entries(pkg.actions).map(([name, a]) => [
      name,
      {
        ...(a.description !== undefined && { description: a.description }),
        input: { schema: a.input },
        output: { schema: a.output },
        cacheable: a.cacheable !== undefined,
      },
    ]),
  );
  const events = Object.fromEntries(
    Object.entries(manifest.events ?? {}).map(([name, e]) => [
      name,
      { ...(e.description !== undefined && { description: e.description }), schema: e.schema ?? {} },
    ]),
  );
  const variables = manifest.configuration?.variables ?? {};
  const defaults = Object.fromEntries(
    Object.entries(variables)
      .filter(([, v]) => v.default !== undefined)
      .map(([name, v]) => [name, v.default]),
  );
  // Values an operator set (updateBot) survive a deploy; variables the package dropped go.
  const kept = Object.fromEntries(
    Object.entries(current?.configuration.data ?? {}).filter(([name]) => name in variables),
  );
  const configuration = {
    data: { ...defaults, ...kept },
    // The variables' types and descriptions, for whoever edits the values with updateBot.
    schema: {
      type: 'object',
      properties: Object.fromEntries(
        Object.entries(variables).map(([name, v]) => [
          name,
          { type: v.type, ...(v.description !== undefined && { description: v.description }) },
        ]),
      ),
    },
  };
  const create = {
    name: manifest.name,
    ...(manifest.description !== undefined && { description: manifest.description }),
    code: JSON.stringify(pkg),
    actions,
    events,
    configuration,
  } satisfies CreateBotBody;
  const update = {
    ...create,
    actions: { ...removed(current && Object.keys(current.actions), actions), ...actions },
    events: { ...removed(current && Object.keys(current.events), events), ...events },
  } satisfies UpdateBotBody;
  return { create, update };
}

export async function deployCommand(argv: string[]): Promise<number> {
  const { flags, positionals } = parseCommandLine(argv, process.env, {
    'bot-id': { type: 'string' },
    url: { type: 'string' },
    token: { type: 'string' },
    'workspace-id': { type: 'string' },
  });
  const dir = positionals[0];
  if (!dir || positionals.length > 1) {
    throw new CliError(
      'usage: parley deploy <dir> [--bot-id <id>] [--url URL] [--token T] [--workspace-id W]',
    );
  }
  const setting = (flag: string, env: string) => {
    const value = flags[flag];
    return typeof value === 'string' && value !== '' ? value : process.env[env] || undefined;
  };
  const url = setting('url', 'PARLEY_URL') ?? DEFAULT_URL;
  const token = setting('token', 'PARLEY_TOKEN');
  const workspaceId = setting('workspace-id', 'PARLEY_WORKSPACE_ID');
  const botId = typeof flags['bot-id'] === 'string' ? flags['bot-id'] : undefined;
  if (!token) throw new CliError('a token is required: set PARLEY_TOKEN or pass --token');
  if (!workspaceId)
    throw new CliError('a workspace is required: set PARLEY_WORKSPACE_ID or pass --workspace-id');

  // Validation happens entirely before the first request: a package with problems changes nothing.
  const compiled = await compileOrReport(dir, '; nothing was deployed');
  if (!compiled) return 1;

  const api = new AdminApi(url, token, workspaceId);
  let bot: DeployedBot;
  if (botId) {
    const route = `/bots/${encodeURIComponent(botId)}`;
    const { bot: current } = await api.request<{ bot: DeployedBot }>('GET', route);
    // One update, in one transaction on the server: conversations continue on the new code.
    ({ bot } = await api.request<{ bot: DeployedBot }>(
      'PUT',
      route,
      botDefinition(compiled, current).update,
    ));
  } else {
    ({ bot } = await api.request<{ bot: DeployedBot }>('POST', '/bots', botDefinition(compiled).create));
  }

  process.stdout.write(`${botId ? 'Deployed' : 'Created and deployed'} ${bot.name}: bot ${bot.id}\n`);
  const chat = bot.integrations.chat;
  if (chat) process.stdout.write(`Chat webhook URL: ${chat.webhookUrl}\n`);
  if (!botId) process.stdout.write(`Deploy again to it with: parley deploy ${dir} --bot-id ${bot.id}\n`);
  for (const secret of compiled.manifest.configuration?.secrets ?? []) {
    if (!bot.secrets.includes(secret)) {
      process.stderr.write(
        `note: secret ${secret} has no value yet: set it with updateBot ({ secrets: { ${secret}: "…" } })\n`,
      );
    }
  }
  return 0;
}
