import type { Executor } from '../../store/index.ts';
import { CHAT_INTEGRATION } from '../chat/channels.ts';
import { HITL_INTEGRATION } from '../handoffs/hitl-schemas.ts';
import { LLM_INTEGRATION } from '../llm/llm-integration.ts';

/** The integrations Parley answers itself, each under its own name as its id: no bundle runs them. */
export const BUILT_IN_INTEGRATIONS = [
  CHAT_INTEGRATION,
  'webchat',
  LLM_INTEGRATION,
  HITL_INTEGRATION,
] as const;
export type BuiltInIntegration = (typeof BUILT_IN_INTEGRATIONS)[number];

/** What the `integrationId` of an installation names. */
export type Installable =
  | { kind: 'builtIn'; name: BuiltInIntegration }
  /** An integration deployed to this server (`bp deploy` of an integration project), with a bundle to run. */
  | { kind: 'deployed'; id: string; name: string; workspaceId: string };

export function isBuiltIn(id: string): id is BuiltInIntegration {
  return (BUILT_IN_INTEGRATIONS as readonly string[]).includes(id);
}

/**
 * The one place an installation's `integrationId` is resolved, for a bot of `workspaceId`: a built-in
 * by its name, or an integration the workspace deployed; undefined when it names neither (the caller
 * refuses it, naming the field). What a hub adds (integrations other workspaces publish) is looked up
 * here too.
 */
export async function resolveInstallable(
  db: Executor,
  workspaceId: string,
  integrationId: string,
): Promise<Installable | undefined> {
  if (isBuiltIn(integrationId)) return { kind: 'builtIn', name: integrationId };
  const row = await db
    .selectFrom('integrations')
    .select(['id', 'name', 'workspace_id'])
    .where('workspace_id', '=', workspaceId)
    .where('id', '=', integrationId)
    .executeTakeFirst();
  return row && { kind: 'deployed', id: row.id, name: row.name, workspaceId: row.workspace_id };
}
