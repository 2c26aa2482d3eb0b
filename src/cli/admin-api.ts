import { apiClient, DEFAULT_URL } from './api.ts';
import { APIS } from '../contract/apis.ts';
import type { ParsedArgs } from '../config.ts';
import { HEADERS } from '../contract/headers.ts';
import { CliError } from './errors.ts';

/** The flags every command that calls the server takes, beside their environment variables. */
export const SERVER_FLAGS = {
  url: { type: 'string' },
  token: { type: 'string' },
  'workspace-id': { type: 'string' },
} as const;

export const SERVER_FLAGS_HELP = `  --url URL          The server (PARLEY_URL; default ${DEFAULT_URL}).
  --token TOKEN      A personal access token of a member of the workspace (PARLEY_TOKEN).
  --workspace-id ID  The workspace (PARLEY_WORKSPACE_ID).`;

/** Where the command's requests go, and as whom: its flags, else PARLEY_URL, PARLEY_TOKEN, PARLEY_WORKSPACE_ID. */
export function targetOf(
  flags: ParsedArgs['flags'],
  env: NodeJS.ProcessEnv = process.env,
): { url: string; token: string; workspaceId: string } {
  const setting = (flag: string, name: string) => {
    const value = flags[flag];
    return typeof value === 'string' && value !== '' ? value : env[name] || undefined;
  };
  const url = setting('url', 'PARLEY_URL') ?? DEFAULT_URL;
  const token = setting('token', 'PARLEY_TOKEN');
  const workspaceId = setting('workspace-id', 'PARLEY_WORKSPACE_ID');
  if (!token) throw new CliError('a token is required: set PARLEY_TOKEN or pass --token');
  if (!workspaceId)
    throw new CliError('a workspace is required: set PARLEY_WORKSPACE_ID or pass --workspace-id');
  return { url, token, workspaceId };
}

/** The Admin API of a server, as a workspace member. */
export function adminClient(url: string, token: string, workspaceId: string) {
  return apiClient(url, APIS.admin, {
    [HEADERS.authorization]: `Bearer ${token}`,
    [HEADERS.workspaceId]: workspaceId,
  });
}

export type AdminClient = ReturnType<typeof adminClient>;
