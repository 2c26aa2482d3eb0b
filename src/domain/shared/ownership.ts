import type { Executor } from '../../store/index.ts';
import type { BotActor, WorkspaceActor } from '../workspace/actors.ts';
import { notFound } from './errors.ts';

/** Tables of records that belong to one bot. */
export type BotTable = 'users' | 'conversations' | 'messages' | 'events' | 'workflows';

const NAMES: Record<BotTable, string> = {
  users: 'User',
  conversations: 'Conversation',
  messages: 'Message',
  events: 'Event',
  workflows: 'Workflow',
};

/** A record of another bot does not exist for this one: 404 either way. */
export async function requireOfBot(
  db: Executor,
  table: BotTable,
  actor: BotActor,
  id: string,
): Promise<void> {
  const row = await db
    .selectFrom(table)
    .select('id')
    .where('id', '=', id)
    .where('bot_id', '=', actor.botId)
    .executeTakeFirst();
  if (!row) throw notFound(NAMES[table], id);
}

/** A bot of another workspace does not exist for this actor: 404 either way. */
export async function requireBotOfWorkspace(
  db: Executor,
  actor: WorkspaceActor,
  botId: string,
): Promise<void> {
  const bot = await db
    .selectFrom('bots')
    .select('id')
    .where('id', '=', botId)
    .where('workspace_id', '=', actor.workspaceId)
    .executeTakeFirst();
  if (!bot) throw notFound('Bot', botId);
}
