import { ConfigError } from '../config.ts';
import { deployCommand, validateCommand } from './deploy.ts';
import { logsCommand } from './logs.ts';
import { memberCommand } from './member.ts';
import { serveCommand } from './serve.ts';
import { tokenCommand } from './token.ts';

const USAGE = `Usage: parley <command> [options]

Commands:
  serve                          Start the server (every API on one port).
  token create --email <email>   Give an account a new personal access token (printed once).
  member add --workspace <id> --email <email> --role <role>
                                 Add an account (created on first use) to a workspace.
  validate <dir>                 Validate and compile a bot package; print OK or every problem.
  deploy <dir> [--bot-id <id>] [--url URL] [--token T] [--workspace-id W]
                                 Validate, compile and upload a bot package (creates the bot
                                 without --bot-id). Reads PARLEY_URL (default http://127.0.0.1:3000),
                                 PARLEY_TOKEN and PARLEY_WORKSPACE_ID.
  logs <botId> [--follow] [--since 10m] [--level L]   Print a bot's log lines (see parley logs --help).

Settings (flag, or environment variable):
  --port PORT  --host HOST  --data-dir DATA_DIR  --database-url DATABASE_URL
  --log-level LOG_LEVEL  --admin-token PARLEY_ADMIN_TOKEN  --public-url PARLEY_PUBLIC_URL
See the README for what each one does and its default.
`;

const COMMANDS: Record<string, (argv: string[]) => Promise<number>> = {
  serve: serveCommand,
  token: tokenCommand,
  member: memberCommand,
  logs: logsCommand,
  validate: validateCommand,
  deploy: deployCommand,
};

async function main(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === 'help' || name === '--help' || name === '-h') {
    process.stdout.write(USAGE);
    return name ? 0 : 1;
  }
  const command = COMMANDS[name];
  if (!command) {
    process.stderr.write(`parley: unknown command "${name}"\n\n${USAGE}`);
    return 1;
  }
  return command(rest);
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
