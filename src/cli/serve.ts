import { buildConfig, parseCommandLine, SETTINGS } from '../config.ts';
import type { Setting } from '../config.ts';
import { startServer } from '../server.ts';
import { CliError } from './errors.ts';
import { printHelp, wantsHelp } from './help.ts';

/** `parley serve --help`: every setting, from the settings list itself. */
function serveHelp(): string {
  const settings = Object.values(SETTINGS as Record<string, Setting>).map(
    (s) =>
      `  --${s.flag} (${s.env}${s.default !== undefined ? `, default ${s.default}` : ''})\n      ${s.description.replace(/`/g, '')}`,
  );
  return `usage: parley serve [settings]

Starts the server: every API on one port, the console at /console/, the API description at /docs.
Stop it with Ctrl-C or SIGTERM: it finishes the requests in flight first.

Settings (a flag, or its environment variable; flags win):
${settings.join('\n')}
`;
}

export async function serveCommand(argv: string[]): Promise<number> {
  if (wantsHelp(argv)) return printHelp(serveHelp());
  const config = buildConfig(parseCommandLine(argv, process.env).values);
  const server = await startServer(config).catch((err: unknown) => {
    if (err instanceof Error && 'code' in err && err.code === 'EADDRINUSE') {
      throw new CliError(
        `${config.host}:${config.port} is in use (another Parley, or another server): stop it, or choose another port with --port or PORT`,
      );
    }
    throw err;
  });
  const log = server.app.log;
  log.info(
    { url: server.url, store: config.store.kind === 'sqlite' ? config.store.file : 'postgres' },
    'Parley is listening',
  );

  if (server.firstStart.created) {
    // The token is shown here once, on the terminal, and never through the logger.
    const lines = [
      '',
      'First start: created an owner account and a workspace.',
      `  workspace id: ${server.firstStart.workspaceId}`,
      server.firstStart.tokenGenerated
        ? `  owner token:  ${server.firstStart.token}   (shown once: keep it now)`
        : '  owner token:  the value of PARLEY_ADMIN_TOKEN',
      '',
      `  curl -H "Authorization: Bearer <token>" -H "x-workspace-id: ${server.firstStart.workspaceId}" ${server.url}/v1/admin/bots`,
      '',
    ];
    process.stdout.write(lines.join('\n') + '\n');
  }

  return new Promise<number>((resolve) => {
    const stop = (signal: string) => {
      log.info({ signal }, 'stopping: finishing requests in flight');
      server.close().then(
        () => resolve(0),
        (err: unknown) => {
          log.error({ err }, 'error while stopping');
          resolve(1);
        },
      );
    };
    process.once('SIGTERM', () => stop('SIGTERM'));
    process.once('SIGINT', () => stop('SIGINT'));
  });
}
