import type { Executor } from '../../store/index.ts';
import { BUILT_IN_INTEGRATIONS } from './built-ins.ts';

/** What the `integrationId` of an installation names. */
export type Installable =
  /** One of Parley's own (built-ins.ts), by any of its ids (`chat`, `chat@0.7.3`): no bundle runs it. */
  | { kind: 'builtIn'; name: string }
  /** An integration deployed to this server (`bp deploy` of an integration project), with a bundle to run. */
  | { kind: 'deployed'; id: string; name: string; workspaceId: string };

/**
 * The one place an installation's `integrationId` is resolved, for a bot of `workspaceId`: a built-in
 * by one of its ids, or an integration the workspace deployed; undefined when it names neither (the
 * caller refuses it, naming the field). Integrations other workspaces published are found by the hub's
 * lookups but not installed yet: their processes run with their own workspace's secrets and keys.
 */
export async function resolveInstallable(
  db: Executor,
  workspaceId: string,
  integrationId: string,
): Promise<Installable | undefined> {
  const builtIn = BUILT_IN_INTEGRATIONS.find((b) => b.id === integrationId);
  if (builtIn) return { kind: 'builtIn', name: builtIn.name };
  const row = await db
    .selectFrom('integrations')
    .select(['id', 'name', 'workspace_id'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', integrationId)
    .executeTakeFirst();
  return row && { kind: 'deployed', id: row.id, name: row.name, workspaceId: row.workspace_id };
}
