import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { ownerAdmin, ROOT } from './parley.ts';
import type { ParleyServer } from './parley.ts';

const run = promisify(execFile);

/**
 * The echo bot of `bp init` (the official CLI, a devDependency), built with `bp build`: the bundle `bp
 * deploy` would upload. Made in the repository's ignored `.tmp/` so the build finds the SDK above it.
 */
export async function buildSdkEchoBundle(): Promise<string> {
  await run('mkdir', ['-p', path.join(ROOT, '.tmp')]);
  const dir = await mkdtemp(path.join(ROOT, '.tmp', 'bench-sdk-'));
  const bp = path.join(ROOT, 'node_modules', '.bin', 'bp');
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('BP_'))),
    BP_BOTPRESS_HOME: path.join(dir, 'home'),
  };
  try {
    await run(bp, ['init', '--type', 'bot', '--name', 'echo-bot', '-y'], { cwd: dir, env });
    const project = path.join(dir, 'echo-bot');
    await run(bp, ['build'], { cwd: project, env });
    return await readFile(path.join(project, '.botpress', 'dist', 'index.js'), 'utf8');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A bot with the bundle as its code (what `bp deploy` sends); answers its id and chat URL. */
export async function deploySdkBundle(
  server: ParleyServer,
  name: string,
  code: string,
): Promise<{ botId: string; chatUrl: string }> {
  const { bot } = await ownerAdmin(server).createBot({ name, code });
  const chatUrl = bot.integrations.chat?.webhookUrl;
  if (!chatUrl) throw new Error(`the bot ${bot.id} has no chat channel`);
  return { botId: bot.id, chatUrl };
}
