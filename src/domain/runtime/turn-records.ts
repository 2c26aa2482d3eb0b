/**
 * What a turn reads before it runs: the event's message, conversation and user, each with its tags, and
 * the states of its variables and dialog, in one statement (each a subquery whose row comes back as
 * JSON), where four took a round trip each on a database server, and four statements in this process;
 * prepared once for each shape (`PreparedShapes`: on PostgreSQL a named statement, parsed once a connection).
 */
import { sql } from 'kysely';
import type { Store } from '../../store/index.ts';
import { PreparedShapes } from '../../store/prepared.ts';
import type { PreparedQuery } from '../../store/prepared.ts';
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

/** What the statement of a turn's records answers: each record as JSON, and its states as a JSON list. */
interface RecordsRow {
  message: string | null;
  conversation: string | null;
  user: string | null;
  states: string;
}

/** The arguments of a turn's statement: the bot, the ids it has, and each state's id and name. */
type RecordsArgs = Record<string, string>;

export class TurnRecordsReader {
  /**
   * The statement of each shape (which records a turn has, and its states' types in order), built and
   * compiled once: built through the query builder for every turn, it was most of the builder's CPU in a
   * profile of AI turns on SQLite (about 0.25 ms a turn). A bot's turns take a few shapes.
   */
  private readonly shapes = new PreparedShapes<RecordsArgs, RecordsRow>(64);

  constructor(
    private readonly store: Store,
    private readonly messages: Messages,
    private readonly conversations: Conversations,
    private readonly users: Users,
    private readonly states: States,
  ) {}

  async read(actor: BotActor, ids: TurnRecordIds): Promise<TurnRecords> {
    if (
      ids.stateKeys.length === 0 &&
      [ids.messageId, ids.conversationId, ids.userId].every((id) => id === undefined)
    )
      return { message: undefined, conversation: undefined, user: undefined, states: new Map() };
    const args: RecordsArgs = { botId: actor.botId };
    if (ids.messageId !== undefined) args.messageId = ids.messageId;
    if (ids.conversationId !== undefined) args.conversationId = ids.conversationId;
    if (ids.userId !== undefined) args.userId = ids.userId;
    ids.stateKeys.forEach((key, i) => {
      args[`id${i}`] = key.id;
      args[`name${i}`] = key.name;
    });
    const { rows } = await this.statementOf(ids, args).execute(this.store.turnDb, args);
    const row = rows[0];
    if (!row) throw new ApiError('Internal', 'the read of a turn’s records answered no row');
    return {
      message: this.messages.resource.itemOfJson(row.message),
      conversation: this.conversations.resource.itemOfJson(row.conversation),
      user: this.users.resource.itemOfJson(row.user),
      states: payloadsOf(fromJson<ReadState[]>(row.states)),
    };
  }

  /** The prepared statement of the shape of `ids`, whose arguments are `args`. */
  private statementOf(ids: TurnRecordIds, args: RecordsArgs): PreparedQuery<RecordsArgs, RecordsRow> {
    const names = Object.keys(args);
    const types = ids.stateKeys.map((key) => key.type);
    return this.shapes.of(`${names.join(',')}:${types.join(',')}`, names, (_db, a) => this.query(a, types));
  }

  /** The statement reading the records `a` names, and the states of these types (their ids and names in `a`). */
  private query(a: RecordsArgs, types: StateKey['type'][]) {
    const botId = a.botId ?? '';
    const record = <T extends TaggedTable>(resource: TaggedResource<T, unknown>, id: string | undefined) =>
      id === undefined ? sql<string | null>`null` : resource.withTagsJson(id, botId);
    const keys = types.map((type, i) => ({ type, id: a[`id${i}`] ?? '', name: a[`name${i}`] ?? '' }));
    return sql<RecordsRow>`select ${record(this.messages.resource, a.messageId)} as message,
        ${record(this.conversations.resource, a.conversationId)} as conversation,
        ${record(this.users.resource, a.userId)} as user,
        ${
          keys.length === 0
            ? sql<string>`'[]'`
            : sql<string>`(select ${this.store.sql.rowsJson('s', READ_STATE_COLUMNS)}
                from (${this.states.readManyQuery(botId, keys)}) s)`
        } as states`;
  }
}
