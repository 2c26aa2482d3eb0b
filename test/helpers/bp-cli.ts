import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
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

/** The integration templates of `bp init --type integration`, in the order its prompt lists them. */
const INTEGRATION_TEMPLATES = ['empty-integration', 'hello-world', 'webhook-message'] as const;
export type IntegrationTemplate = (typeof INTEGRATION_TEMPLATES)[number];

/** An integration project made by `bp init`; `name` is its integration name (`handle/name` or bare). */
export interface IntegrationProject extends BotProject {
  name: string;
}

/**
 * `bp init --type integration` from one of the CLI's templates; `files` (path relative to the project
 * → content) are written over it. `name` may carry a workspace handle (`acme/my-integration`): `bp init`
 * puts it as is in package.json's `integrationName`, which the definition reads.
 *
 * `bp init` has no flag for the template: with `-y` its prompt answers the default (the empty one), so
 * the others are chosen by answering the prompt on stdin (arrow keys, then Enter), as a user would.
 */
export async function initIntegrationProject(
  name: string,
  template: IntegrationTemplate,
  files: Record<string, string> = {},
): Promise<IntegrationProject> {
  const root = path.join(PROJECTS, `${name.replace(/[^a-z0-9-]/gi, '-')}-${randomBytes(4).toString('hex')}`);
  const home = path.join(root, 'home');
  await mkdir(root, { recursive: true });
  const args = ['init', '--type', 'integration', '--name', name];
  const choice = INTEGRATION_TEMPLATES.indexOf(template);
  if (choice === 0) await bp([...args, '-y'], root, home);
  else await bp(args, root, home, `${'\x1b[B'.repeat(choice)}\r`);
  // The CLI names the folder after the name in kebab case: the one folder besides the CLI home.
  const made = (await readdir(root, { withFileTypes: true })).filter(
    (entry) => entry.isDirectory() && entry.name !== 'home',
  );
  const [folder] = made;
  assert.ok(folder && made.length === 1, `bp init made one project folder in ${root}`);
  const dir = path.join(root, folder.name);
  const definition = 'integration.definition.ts';
  assert.equal(
    await readFile(path.join(dir, definition), 'utf8'),
    await readFile(path.resolve('node_modules/@botpress/cli/templates', template, definition), 'utf8'),
    `bp init used the ${template} template`,
  );
  for (const [file, content] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
    await writeFile(path.join(dir, file), content);
  }
  return { name, dir, home, remove: () => rm(root, { recursive: true, force: true }) };
}

/**
 * `bp login` to the test server as its owner, then `bp deploy -y` of an integration project (a build,
 * then createIntegration, or updateIntegration when the workspace has this name and version).
 */
export async function deployIntegrationWithBp(
  t: TestServer,
  project: IntegrationProject,
  args: string[] = [],
): Promise<string> {
  const login = ['login', '--api-url', t.url, '--token', t.token, '--workspace-id', t.workspaceId, '-y'];
  await bp(login, project.dir, project.home);
  return bp(['deploy', '-y', ...args], project.dir, project.home);
}

/** Runs the CLI; `input` is written to its stdin (the answers to its prompts), which is then closed. */
async function bp(args: string[], cwd: string, home: string, input?: string): Promise<string> {
  // The CLI reads every flag from BP_* variables too, and they win over flags: none leak in from here.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BP_')));
  try {
    const running = run(BP, args, {
      cwd,
      env: { ...env, BP_BOTPRESS_HOME: home },
      encoding: 'utf8',
      timeout: 120_000,
    });
    if (input !== undefined) running.child.stdin?.end(input);
    const { stdout, stderr } = await running;
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
