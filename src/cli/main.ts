import { ConfigError, settingsUsage } from '../config.ts';
import { VERSION } from '../version.ts';

const USAGE = `Usage: parley <command> [options]

Commands:
  serve                          Start the server (every API on one port).
  token create --email <email>   Give an account a new personal access token (printed once).
  member add --workspace <id> --email <email> --role <role>
                                 Add an account (created on first use) to a workspace.
  backup <file>                  Back the server's store up while it runs (SQLite or pg_dump).
  restore <file> [--replace]     Restore a backup into an empty store (the server stopped).
  validate <dir>                 Validate and compile a bot package; print OK or every problem.
  deploy <dir> [--bot-id <id> | --new] [--url URL] [--token T] [--workspace-id W]
                                 Validate, compile and upload a bot package (to the bot the
                                 folder deployed to, else a new one). Reads PARLEY_URL (default http://127.0.0.1:3000),
                                 PARLEY_TOKEN and PARLEY_WORKSPACE_ID.
                                 A package's knowledge bases are created, and their changed
                                 documents uploaded and indexed.
  versions list|deploy [<dir> | --bot-id <id>]        A bot's versions; versions deploy <id> rolls back (or forward).
  logs <botId> [--follow] [--since 10m] [--level L]   Print a bot's log lines (see parley logs --help).
  chat (--bot <id> | --webhook <url>) [--json]        Chat with a bot in the terminal.
  init <dir> [--template echo|menu|faq]               Start a bot package from a template.
  version                        Print Parley's version (also --version).
  files upload|list|delete       A bot's files (parley files --help for the options). Reads PARLEY_BOT_ID.
  kb list|search                 A bot's knowledge bases; kb search <kb> <question> tries a question.
  tables list|export|import      A bot's tables: list them, export one to CSV or JSON, import a file.
Every command answers --help.

Settings of serve (a flag, or the environment variable; flags win):
${settingsUsage()}
`;

type Command = (argv: string[]) => Promise<number>;

/** Each command's module is loaded when it runs: the server does not load the bot compiler, and so on. */
const COMMANDS: Record<string, () => Promise<Command>> = {
  serve: async () => (await import('./serve.ts')).serveCommand,
  token: async () => (await import('./token.ts')).tokenCommand,
  member: async () => (await import('./member.ts')).memberCommand,
  backup: async () => (await import('./backup.ts')).backupCommand,
  restore: async () => (await import('./backup.ts')).restoreCommand,
  logs: async () => (await import('./logs.ts')).logsCommand,
  validate: async () => (await import('./deploy.ts')).validateCommand,
  deploy: async () => (await import('./deploy.ts')).deployCommand,
  versions: async () => (await import('./versions.ts')).versionsCommand,
  chat: async () => (await import('./chat.ts')).chatCommand,
  init: async () => (await import('./init.ts')).initCommand,
  version: async () => async () => {
    process.stdout.write(`parley ${VERSION}\n`);
    return 0;
  },
  files: async () => (await import('./files.ts')).filesCommand,
  kb: async () => (await import('./files.ts')).kbCommand,
  tables: async () => (await import('./tables.ts')).tablesCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const topic = name === 'help' && rest[0] !== undefined ? COMMANDS[rest[0]] : undefined;
  if (topic) return (await topic())(['--help']);
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name ? 0 : 1;
  }
  const command = COMMANDS[name === '--version' || name === '-v' ? 'version' : name];
  if (!command) {
    process.stderr.write(`parley: unknown command "${name}": parley help lists the commands\n`);
    return 1;
  }
  return (await command())(rest);
}

try {
  process.exitCode = await main(process.argv.slice(2));
} catch (err) {
  if (err instanceof ConfigError || (err as { isCliError?: boolean }).isCliError) {
    process.stderr.write(`parley: ${(err as Error).message}\n`);
  } else {
    process.stderr.write(`parley: ${(err as Error).stack ?? String(err)}\n`);
  }
  process.exitCode = 1;
}
