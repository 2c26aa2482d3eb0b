import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import type { TestServer } from './server.ts';

const run = promisify(execFile);

/** The official CLI (`@botpress/cli`, a devDependency), never `npx bp`: that name is another package. */
const BP = path.resolve('node_modules/.bin/bp');
/**
 * Projects live inside the repository (in its ignored `.tmp/`) so that `bp build` finds the SDK the
 * way a project's own install would: in a `node_modules` of a folder above.
 */
const PROJECTS = path.resolve('.tmp/sdk-bots');

/** A bot project made by `bp init`, with its own CLI home (credentials), as a user's machine has. */
export interface BotProject {
  dir: string;
  home: string;
  remove(): Promise<void>;
}

/** `bp init --type bot` (the CLI's echo bot template); `source` replaces its `src/index.ts`. */
export async function initBotProject(name: string, source?: string): Promise<BotProject> {
  const root = path.join(PROJECTS, `${name}-${randomBytes(4).toString('hex')}`);
  const home = path.join(root, 'home');
  await mkdir(root, { recursive: true });
  await bp(['init', '--type', 'bot', '--name', name, '-y'], root, home);
  const dir = path.join(root, name);
  if (source !== undefined) await writeFile(path.join(dir, 'src/index.ts'), source);
  return { dir, home, remove: () => rm(root, { recursive: true, force: true }) };
}

/** `bp login` to the test server as its owner, then `bp deploy` of the project to `botId`. */
export async function deployWithBp(t: TestServer, project: BotProject, botId: string): Promise<string> {
  const login = ['login', '--api-url', t.url, '--token', t.token, '--workspace-id', t.workspaceId, '-y'];
  await bp(login, project.dir, project.home);
  return bp(['deploy', '--botId', botId, '-y'], project.dir, project.home);
}

async function bp(args: string[], cwd: string, home: string): Promise<string> {
  // The CLI reads every flag from BP_* variables too, and they win over flags: none leak in from here.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BP_')));
  try {
    const { stdout, stderr } = await run(BP, args, {
      cwd,
      env: { ...env, BP_BOTPRESS_HOME: home },
      encoding: 'utf8',
      timeout: 120_000,
    });
    return stdout + stderr;
  } catch (err) {
    const failed = err as { stdout?: string; stderr?: string; message: string };
    assert.fail(
      `bp ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}${failed.stderr ?? ''}`,
    );
  }
}

/** The chat URL of a bot, whose chat channel must be enabled (a `bp deploy` leaves it so). */
export async function chatUrlOf(t: TestServer, botId: string): Promise<string> {
  const { bot } = await t.client().getBot({ id: botId });
  const chat = bot.integrations.chat;
  assert.ok(chat?.enabled, `the chat channel is enabled after bp deploy: ${JSON.stringify(chat)}`);
  assert.ok(chat.webhookUrl);
  return chat.webhookUrl;
}
