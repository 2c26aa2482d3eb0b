/**
 * What a turn reads before it runs: the event's message, conversation and user, each with its tags, and
 * the states of its variables and dialog, in one statement (each a subquery whose row comes back as
 * JSON), where four took a round trip each on a database server, and four statements in this process.
 */
import { sql } from 'kysely';
import type { Store } from '../../store/index.ts';
import { ApiError } from '../shared/errors.ts';
import { fromJson } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { TaggedResource, TaggedTable } from '../shared/tagged-resource.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { Conversations } from './conversations.ts';
import type { Messages } from './messages.ts';
import { payloadsOf, READ_STATE_COLUMNS } from './states.ts';
import type { ReadState, StateKey, States } from './states.ts';
import type { Users } from './users.ts';
import type { User, Conversation, Message } from './schemas.ts';

export interface TurnRecordIds {
  messageId?: string | undefined;
  conversationId?: string | undefined;
  userId?: string | undefined;
  /** The states to read with them (none: no states are read). */
  stateKeys: StateKey[];
}

/** A record of another bot, or none, is absent. */
export interface TurnRecords {
  message?: Message | undefined;
  conversation?: Conversation | undefined;
  user?: User | undefined;
  /** Keyed `type/id/name`, without the expired ones. */
  states: Map<string, JsonObject>;
}

export class TurnRecordsReader {
  constructor(
    private readonly store: Store,
    private readonly messages: Messages,
    private readonly conversations: Conversations,
    private readonly users: Users,
    private readonly states: States,
  ) {}

  async read(actor: BotActor, ids: TurnRecordIds): Promise<TurnRecords> {
    const { botId } = actor;
    const record = <T extends TaggedTable>(resource: TaggedResource<T, unknown>, id: string | undefined) =>
      id === undefined ? sql<string | null>`null` : resource.withTagsJson(id, botId);
    const { rows } = await sql<{
      message: string | null;
      conversation: string | null;
      user: string | null;
      states: string;
    }>`select ${record(this.messages.resource, ids.messageId)} as message,
        ${record(this.conversations.resource, ids.conversationId)} as conversation,
        ${record(this.users.resource, ids.userId)} as user,
        ${
          ids.stateKeys.length === 0
            ? sql<string>`'[]'`
            : sql<string>`(select ${this.store.sql.rowsJson('s', READ_STATE_COLUMNS)}
                from (${this.states.readManyQuery(botId, ids.stateKeys)}) s)`
        } as states`.execute(this.store.turnDb);
    const row = rows[0];
    if (!row) throw new ApiError('Internal', 'the read of a turn’s records answered no row');
    return {
      message: this.messages.resource.itemOfJson(row.message),
      conversation: this.conversations.resource.itemOfJson(row.conversation),
      user: this.users.resource.itemOfJson(row.user),
      states: payloadsOf(fromJson<ReadState[]>(row.states)),
    };
  }
}
