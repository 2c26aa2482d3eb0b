import { stat } from 'node:fs/promises';
import path from 'node:path';
import { parseCommandLine } from '../config.ts';
import type { CompiledPackage } from '../package/format.ts';
import { loadPackage, PackageError } from '../package/load.ts';
import { formatProblem } from '../package/problems.ts';
import { ServerAnswerError } from './api.ts';
import { linkBot, linkedBot, LINKS_FILE } from './deploy-links.ts';
import { adminClient, SERVER_FLAGS, SERVER_FLAGS_HELP, targetOf } from './admin-api.ts';
import { CliError } from './errors.ts';
import { printHelp, wantsHelp } from './help.ts';
import { userPath } from './paths.ts';
import { FilesApi } from './files-api.ts';
import { syncKnowledge } from './knowledge.ts';
import { applyTables, destructiveChanges, planTables } from './package-tables.ts';
import type { TableMigration } from './package-tables.ts';
import { botDefinition } from '../package/bot-definition.ts';
import type { DeployedBot } from '../package/bot-definition.ts';

/** Loads and compiles a package; on problems prints every one of them (paths as given) and returns undefined. */
async function compileOrReport(dir: string, doing: string): Promise<CompiledPackage | undefined> {
  const folder = userPath(dir);
  // A path that does not exist is no folder either.
  if (!(await stat(folder).catch(() => undefined))?.isDirectory())
    throw new CliError(`${dir} is not a folder`);
  try {
    return await loadPackage(folder);
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

const VALIDATE_HELP = `usage: parley validate <dir>

Checks a bot package folder and compiles its code, without deploying it: prints OK with what it holds,
or every problem found, each with its file, line, column and field. Exits 1 when there are problems.
`;

const DEPLOY_USAGE =
  'usage: parley deploy <dir> [--bot-id <id> | --new] [--note TEXT] [--allow-destructive] [--url URL] [--token T] [--workspace-id W]';
const DEPLOY_HELP = `${DEPLOY_USAGE}

Validates a bot package folder, compiles it and uploads it. The first deploy of a folder to a server and
workspace creates a bot and prints its id and chat URL; the folder remembers it (in ${LINKS_FILE}, which
git ignores), and the next deploys of the folder deploy new versions of that bot (its conversations go
on). Each deploy is kept as a version of the bot (parley versions list), which parley versions deploy
rolls back to. A package with problems deploys nothing.
The package's tables (tables/<name>.json) are created, or migrated: columns the package added are added,
changed ones are updated. A change that deletes data (a column the package no longer has, or a column
whose type changed, which empties it) is refused, and nothing is deployed, unless --allow-destructive.
  --bot-id ID          The bot to deploy to (default: the one the folder deployed to, else a new bot);
                       the folder remembers it.
  --new                Create a new bot even if the folder deployed to one; the folder remembers it.
  --note TEXT          A note kept with the version this deploy makes (what changed, and why).
  --allow-destructive  Apply table changes that delete data: remove the columns the package no longer
                       has, and empty the columns whose type changed.
${SERVER_FLAGS_HELP}
`;

export async function validateCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(VALIDATE_HELP);
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
    ...(compiled.tables ? [count(Object.keys(compiled.tables).length, 'table')] : []),
  ];
  process.stdout.write(`OK: ${compiled.manifest.name}: ${counts.join(', ')}\n`);
  return 0;
}

/** Whether table changes that delete data stop the deploy (they are not allowed): then says why. */
function refused(plan: TableMigration[], allowDestructive: boolean): boolean {
  const destructive = destructiveChanges(plan);
  if (destructive.length === 0 || allowDestructive) return false;
  for (const line of destructive) process.stderr.write(`parley: ${line}\n`);
  process.stderr.write(
    'parley: nothing was deployed: deploy again with --allow-destructive to apply these changes (or rename a column with renameTableColumn to keep its values)\n',
  );
  return true;
}

export async function deployCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(DEPLOY_HELP);
  const { flags, positionals } = parseCommandLine(argv, process.env, {
    'bot-id': { type: 'string' },
    new: { type: 'boolean' },
    'allow-destructive': { type: 'boolean' },
    note: { type: 'string' },
    ...SERVER_FLAGS,
  });
  const dir = positionals[0];
  if (!dir || positionals.length > 1) throw new CliError(DEPLOY_USAGE);
  const { url, token, workspaceId } = targetOf(flags);
  const given = typeof flags['bot-id'] === 'string' ? flags['bot-id'] : undefined;
  if (given !== undefined && flags.new === true) throw new CliError('--bot-id and --new: choose one');
  const folder = userPath(dir);
  const link =
    given === undefined && flags.new !== true ? await linkedBot(folder, url, workspaceId) : undefined;
  const linked = link && 'botId' in link ? link.botId : undefined;
  if (link && 'elsewhere' in link) {
    process.stderr.write(
      `note: ${LINKS_FILE} was written in ${link.elsewhere.folder} (its bot: ${link.elsewhere.botId}); this folder is a copy, so it gets a bot of its own (--bot-id ${link.elsewhere.botId} deploys to that one)\n`,
    );
  }
  const botId = given ?? linked;
  const note = typeof flags.note === 'string' ? { versionDescription: flags.note } : {};

  // Validation happens entirely before the first request: a package with problems changes nothing.
  const compiled = await compileOrReport(dir, '; nothing was deployed');
  if (!compiled) return 1;

  const api = adminClient(url, token, workspaceId);
  // The bot's tables, through the Tables API as the bot (as its knowledge bases are made).
  const asBot = (id: string) => new FilesApi(url, token, id);
  const tables = compiled.tables ?? {};
  let bot: DeployedBot;
  if (botId) {
    const current = await api.getBot({ id: botId }).then(
      (answer) => answer.bot,
      (err: unknown) => {
        if (linked && err instanceof ServerAnswerError && err.status === 404) {
          throw new CliError(
            `${dir} was deployed to bot ${linked} (${LINKS_FILE}), which ${url} no longer has: deploy with --new to create another`,
          );
        }
        throw err;
      },
    );
    // The tables first: the new code finds its columns, and a refused migration deploys nothing.
    const plan = await planTables(asBot(botId).tables, tables);
    if (refused(plan, flags['allow-destructive'] === true)) return 1;
    await applyTables(asBot(botId).tables, plan);
    // One update, in one transaction on the server: conversations continue on the new code.
    ({ bot } = await api.updateBot({ ...botDefinition(compiled, current).update, ...note, id: botId }));
  } else {
    // The bot, its tables, then its code: the version this deploy makes keeps the tables' schemas.
    const { name, description } = botDefinition(compiled).create;
    const { bot: created } = await api.createBot({ name, ...(description !== undefined && { description }) });
    await linkBot(folder, { url, workspaceId, botId: created.id, folder });
    await applyTables(asBot(created.id).tables, await planTables(asBot(created.id).tables, tables));
    ({ bot } = await api.updateBot({ ...botDefinition(compiled, created).update, ...note, id: created.id }));
  }

  await linkBot(folder, { url, workspaceId, botId: bot.id, folder });
  process.stdout.write(`${botId ? 'Deployed' : 'Created and deployed'} ${bot.name}: bot ${bot.id}\n`);
  const chat = bot.integrations.chat;
  if (chat) process.stdout.write(`Chat webhook URL: ${chat.webhookUrl}\n`);
  if (chat?.webchatShareUrl) process.stdout.write(`Webchat share link: ${chat.webchatShareUrl}\n`);
  if (linked)
    process.stdout.write(`${dir} deploys to this bot (${LINKS_FILE}): --new creates another bot instead\n`);
  if (!botId)
    process.stdout.write(
      `${dir} now deploys to this bot (${LINKS_FILE}): parley deploy ${dir} again deploys a new version of it, --new another bot\n`,
    );
  const indexed = await syncKnowledge(asBot(bot.id), folder, compiled.knowledge ?? {});
  for (const secret of compiled.manifest.configuration?.secrets ?? []) {
    if (!bot.secrets.includes(secret)) {
      process.stderr.write(
        `note: secret ${secret} has no value yet: set it with updateBot ({ secrets: { ${secret}: "…" } })\n`,
      );
    }
  }
  return indexed ? 0 : 1;
}
