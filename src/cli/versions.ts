import { parseCommandLine } from '../config.ts';
import { adminClient, SERVER_FLAGS, SERVER_FLAGS_HELP, targetOf } from './admin-api.ts';
import { linkedBot, LINKS_FILE } from './deploy-links.ts';
import { CliError } from './errors.ts';
import { printHelp, wantsHelp } from './help.ts';
import { userPath } from './paths.ts';

const VERSIONS_USAGE = `usage: parley versions list [<dir> | --bot-id <id>] [--json] [--url URL] [--token T] [--workspace-id W]
  parley versions deploy <versionId> [<dir> | --bot-id <id>] [--url URL] [--token T] [--workspace-id W]`;
const VERSIONS_HELP = `${VERSIONS_USAGE}

A bot's versions: every deploy (parley deploy, bp deploy, the console) keeps what it deployed as one.
The bot is --bot-id, else the one the package folder <dir> (default: the current folder) deployed to
(${LINKS_FILE}).
  list     Each version, newest first: its number, id, name, when and by whom it was made, its note;
           * marks the one the bot runs (--json: a JSON array).
  deploy   Makes the bot run that version again, older or newer (a rollback, or forward again), in one
           step: conversations go on, each dialog where it stood when the version has its node.
           Needs the developer role.
${SERVER_FLAGS_HELP}
`;

const print = (line: string) => process.stdout.write(`${line}\n`);

export async function versionsCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(VERSIONS_HELP);
  const { flags, positionals } = parseCommandLine(argv, process.env, {
    'bot-id': { type: 'string' },
    json: { type: 'boolean' },
    ...SERVER_FLAGS,
  });
  const [action, ...rest] = positionals;
  const versionId = action === 'deploy' ? rest.shift() : undefined;
  if ((action !== 'list' && action !== 'deploy') || (action === 'deploy' && !versionId) || rest.length > 1)
    throw new CliError(VERSIONS_USAGE);
  const { url, token, workspaceId } = targetOf(flags);
  const botId = await botOf(flags['bot-id'], rest[0] ?? '.', url, workspaceId);
  const api = adminClient(url, token, workspaceId);

  if (versionId !== undefined) {
    await api.deployBotVersion({ id: botId, versionId });
    const { versions } = await api.listBotVersions({ id: botId });
    const deployed = versions.find((v) => v.id === versionId);
    print(
      `Deployed version ${deployed ? `${deployed.number} (${deployed.name})` : versionId} of bot ${botId}`,
    );
    return 0;
  }
  const { versions } = await api.listBotVersions({ id: botId });
  if (flags.json === true) {
    print(JSON.stringify(versions, null, 2));
    return 0;
  }
  if (versions.length === 0) print(`Bot ${botId} has no versions: it was never deployed`);
  for (const v of versions) {
    const by = v.createdBy === undefined ? '' : ` by ${v.createdBy}`;
    const note = v.description === undefined ? '' : `  ${v.description}`;
    print(`${v.deployed ? '*' : ' '} ${v.number}  ${v.id}  ${v.name}  ${v.createdAt}${by}${note}`);
  }
  return 0;
}

/** The bot named by --bot-id, else the one the folder deployed to on this server and workspace. */
async function botOf(given: unknown, dir: string, url: string, workspaceId: string): Promise<string> {
  if (typeof given === 'string' && given !== '') return given;
  const link = await linkedBot(userPath(dir), url, workspaceId);
  if (link && 'botId' in link) return link.botId;
  throw new CliError(
    `${dir} was not deployed to ${url} in this workspace (no ${LINKS_FILE} names a bot there): pass --bot-id`,
  );
}
