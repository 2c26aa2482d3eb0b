/**
 * What a turn reads before it runs: the event's message, conversation and user, each with its tags, and
 * the states of its variables and dialog. Where each statement is a round trip (a database server), one
 * statement reads them all (each a subquery whose row comes back as JSON), where four took a round trip
 * each; in a database in this process, whose statements cost no round trip, each is read by its own query.
 */
import { sql } from 'kysely';
import type { ServerSql, Store } from '../../store/index.ts';
import { ApiError, unlessMissing } from '../shared/errors.ts';
import { fromJson } from '../shared/json.ts';
import type { JsonObject } from '../shared/json.ts';
import type { RowWithTags, TaggedResource, TaggedTable } from '../shared/tagged-resource.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { Conversations } from './conversations.ts';
import type { Messages } from './messages.ts';
import { payloadsOf } from './states.ts';
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
    const storeSql = this.store.sql;
    if (storeSql.roundTrips) return this.readAtOnce(storeSql, actor, ids);
    const [message, conversation, user, states] = await Promise.all([
      ids.messageId === undefined ? undefined : unlessMissing(this.messages.get(actor, ids.messageId)),
      ids.conversationId === undefined
        ? undefined
        : unlessMissing(this.conversations.get(actor, ids.conversationId)),
      ids.userId === undefined ? undefined : unlessMissing(this.users.get(actor, ids.userId)),
      this.states.readMany(actor, ids.stateKeys),
    ]);
    return { message, conversation, user, states };
  }

  private async readAtOnce(storeSql: ServerSql, actor: BotActor, ids: TurnRecordIds): Promise<TurnRecords> {
    const { botId } = actor;
    const record = <T extends TaggedTable>(resource: TaggedResource<T, unknown>, id: string | undefined) =>
      id === undefined
        ? sql<string | null>`null`
        : sql<string | null>`(select ${storeSql.rowJson('r')} from (${resource.withTagsQuery(id, botId)}) r)`;
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
            : sql<string>`(select ${storeSql.rowsJson('s')}
                from (${this.states.readManyQuery(botId, ids.stateKeys)}) s)`
        } as states`.execute(this.store.turnDb);
    const row = rows[0];
    if (!row) throw new ApiError('Internal', 'the read of a turn’s records answered no row');
    return {
      message: itemOf(this.messages.resource, row.message),
      conversation: itemOf(this.conversations.resource, row.conversation),
      user: itemOf(this.users.resource, row.user),
      states: payloadsOf(fromJson<ReadState[]>(row.states)),
    };
  }
}

function itemOf<T extends TaggedTable, Item>(
  resource: TaggedResource<T, Item>,
  json: string | null,
): Item | undefined {
  return json === null ? undefined : resource.itemOf(fromJson<RowWithTags<T>>(json));
}
