import type { Executor } from '../../store/index.ts';
import { BUILT_IN_INTEGRATIONS } from './built-ins.ts';

/** What the `integrationId` of an installation names. */
export type Installable =
  /** One of Parley's own (built-ins.ts), by any of its ids (`chat`, `chat@0.7.3`): no bundle runs it. */
  | { kind: 'builtIn'; name: string }
  /**
   * An integration deployed to this server (`bp deploy` of an integration project), with a bundle to run;
   * `workspaceId` is the workspace that deployed it.
   */
  | { kind: 'deployed'; id: string; name: string; workspaceId: string };

/**
 * The one place an installation's `integrationId` is resolved, for a bot of `workspaceId`: a built-in
 * by one of its ids, an integration the workspace deployed, or one another workspace's was published
 * (public or unlisted: the operator's choice, publishing.ts); undefined when it names none (the caller
 * refuses it, naming the field). A published integration runs for the installing bot, in its
 * workspace: its process counts against that workspace and acts as that bot only.
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
    .where('id', '=', integrationId)
    .where((eb) => eb.or([eb('workspace_id', '=', workspaceId), eb('visibility', '<>', 'private')]))
    .executeTakeFirst();
  return row && { kind: 'deployed', id: row.id, name: row.name, workspaceId: row.workspace_id };
}
