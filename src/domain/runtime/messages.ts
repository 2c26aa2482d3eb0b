import { sql } from 'kysely';
import type { RawBuilder, Transaction } from 'kysely';
import type { Executor, Store, StoreSql } from '../../store/index.ts';
import { everyKey, prepare } from '../../store/prepared.ts';
import type { Database, Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { Conversations } from './conversations.ts';
import { DEFAULT_INTEGRATION } from './conversations.ts';
import type { ChannelOutbox } from '../integrations/channel-sends.ts';
import { notFound } from '../shared/errors.ts';
import type { Events } from './events.ts';
import { eventRow, workspaceOf } from './events.ts';
import { toEvent } from './event-record.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, toJson, withoutNulls } from '../shared/json.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import type { JsonObject } from '../shared/schemas.ts';
import type { ConversationLog, LiveSignal, RecordedSignal } from '../live/conversation-log.ts';
import { recorded } from '../live/conversation-log.ts';
import type { QueuedNotice } from '../queue/event-queue.ts';
import { claimsAsStored, holdConversation, runningTurnsIn } from '../queue/event-queue.ts';
import type { AdmissionEntry } from '../queue/admission.ts';
import { TaggedResource } from '../shared/tagged-resource.ts';
import { insertTags, discriminatingTags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import type { Users } from './users.ts';
import type {
  User,
  Conversation,
  Message,
  CreateMessageBody,
  GetOrCreateMessageBody,
  UpdateMessageBody,
  InitializeIncomingMessageBody,
  ImportedMessage,
} from './schemas.ts';

export interface ListMessagesQuery extends PageRequest {
  conversationId?: string;
  tags?: Record<string, string>;
  afterDate?: string;
  beforeDate?: string;
}

/** Options of a message's creation beyond its body. */
export interface CreateOptions {
  /** The creation time of an imported message. */
  createdAt?: string;
  /** Imported history is not news: it queues no event for the bot and reaches no listener. */
  silent?: boolean;
  /** The caller has just checked that the user takes part in the conversation (the Chat API does). */
  participant?: boolean;
  /** The message's id, when the caller makes it (`derivedId`: a turn's reply, found by it if the turn runs again). */
  id?: string;
  /** The event whose turn sends it (default: the turn bot code runs in, if any). */
  eventId?: string;
  /**
   * The message is the bot's side of the conversation though its `userId` is a user's: a person who
   * took the conversation over (a handoff's agent). It is outgoing: no turn for the bot, and it goes out
   * through the conversation's channel as the bot's messages do.
   */
  fromAgent?: boolean;
  /** What admission control let in as the request arrived (`create` asks it): left once its event is counted. */
  entry?: AdmissionEntry;
}

/** The bot's side of the conversation (its own, or an agent's who took it over): it queues no turn. */
function isOutgoing(actor: BotActor, body: CreateMessageBody, options: CreateOptions): boolean {
  return body.userId === actor.botId || options.fromAgent === true;
}

/** The event whose turn sends a message: the one given, else the turn of the bot code that calls. */
const turnEventOf = (actor: BotActor, options: CreateOptions): string | null =>
  options.eventId ?? actor.turn?.eventId ?? null;

function toMessage(row: Row<'messages'>, tags: Record<string, string>): Message {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    type: row.type,
    payload: fromJson<JsonObject>(row.payload),
    direction: row.direction,
    userId: row.user_id,
    conversationId: row.conversation_id,
    tags,
    ...(row.origin !== null && { origin: row.origin }),
    ...(row.event_id !== null && { eventId: row.event_id }),
  };
}

/** What a message's creation did: the message, and the live signals to publish after the commit. */
interface Inserted {
  message: Message;
  signals: RecordedSignal[];
  /** The event queued for the bot, if one was. */
  queued?: QueuedNotice;
  /** The message was queued for its conversation's integration. */
  toChannel?: boolean;
}

/**
 * A message counted in its conversation, which is how the conversation is found (`numbersSignal`: its
 * signal numbered too; `stampsEvent`: the instant of the event it queues taken too, `Events.stamp`).
 */
const countMessageIn = (numbersSignal: boolean, stampsEvent: StoreSql | undefined) =>
  prepare(
    ['conversationId', 'botId', 'now'],
    (db, { conversationId, botId, now }: { conversationId: string; botId: string; now: string }) =>
      db
        .updateTable('conversations')
        .set((eb) => ({
          message_count: eb('message_count', '+', 1),
          updated_at: now,
          ...(numbersSignal && { signal_seq: eb('signal_seq', '+', 1) }),
          ...(stampsEvent && {
            last_event_at: stampsEvent.instantAfter(sql.ref('last_event_at'), sql`${now}`),
          }),
        }))
        .where('id', '=', conversationId)
        .where('bot_id', '=', botId)
        .returning(['signal_seq', 'integration', 'last_event_at']),
  );

/** The four ways of counting a message, by whether it numbers its signal and queues an event. */
const countingsWith = (storeSql: StoreSql) => ({
  message: countMessageIn(false, undefined),
  messageAndSignal: countMessageIn(true, undefined),
  messageAndEvent: countMessageIn(false, storeSql),
  messageSignalAndEvent: countMessageIn(true, storeSql),
});

const MESSAGE_COLUMNS = everyKey<Row<'messages'>>()([
  'id',
  'bot_id',
  'conversation_id',
  'user_id',
  'type',
  'payload',
  'direction',
  'origin',
  'event_id',
  'created_at',
  'updated_at',
]);

const insertMessage = prepare(MESSAGE_COLUMNS, (db, row: Row<'messages'>) =>
  db.insertInto('messages').values(row),
);

/** A message with its signal, one statement where the store has `message_writes` (`StoreSql.writeViews`). */
const insertMessageWithSignal = prepare(
  [...MESSAGE_COLUMNS, 'signal_seq', 'signal_frame'],
  (db, row: Row<'message_writes'>) => db.insertInto('message_writes').values(row),
);

/**
 * A bot's reply in a conversation of the chat channel on SQLite, as `insertChatReply` writes it on
 * PostgreSQL, in one statement: by the insert trigger of the view `chat_reply_writes` (migration 0040,
 * `StoreSql.writeViews`). The signal's number is read back by the insert's RETURNING, which SQLite
 * evaluates after the trigger; null when the conversation is not found, or is another integration's.
 */
const insertChatReplyWritten = prepare(
  [...MESSAGE_COLUMNS, 'integration', 'signal_frame'],
  (db, row: Row<'chat_reply_writes'>) =>
    db
      .insertInto('chat_reply_writes')
      .values(row)
      .returning(
        sql<number | null>`(select c.signal_seq from conversations c
          where c.id = chat_reply_writes.conversation_id and c.bot_id = chat_reply_writes.bot_id
            and c.integration = chat_reply_writes.integration)`.as('signal_seq'),
      ),
);

/** What a message stored by one statement of its own is made of (`insertChatReply`, `insertIncoming`). */
type MessageAtOnce = {
  conversationId: string;
  botId: string;
  id: string;
  userId: string;
  type: string;
  payload: string;
  origin: Row<'messages'>['origin'];
  /** The event whose turn sends it (a bot's reply), if a turn does. */
  turnEventId: string | null;
  now: string;
  frame: string;
};

/**
 * The CTEs of a message stored at once: the conversation's update counts it and numbers its signal, and
 * is the guard (with `also`'s conditions): when it changes no row, nothing is inserted.
 */
const messageCtes = (
  a: MessageAtOnce,
  direction: Message['direction'],
  also: RawBuilder<unknown>,
  queuesEvent?: StoreSql,
) => ({
  // A message that queues an event stamps it here, after the last event of its conversation (`Events.stamp`).
  counted: sql`counted as (
      update conversations
      set message_count = message_count + 1, updated_at = ${a.now}, signal_seq = signal_seq + 1${
        queuesEvent
          ? sql`, last_event_at = ${queuesEvent.instantAfter(sql.ref('last_event_at'), sql`${a.now}`)}`
          : sql``
      }
      where id = ${a.conversationId} and bot_id = ${a.botId}${also}
      returning signal_seq, last_event_at
    )`,
  message: sql`message as (
      insert into messages
        (id, bot_id, conversation_id, user_id, type, payload, direction, origin, event_id, created_at, updated_at)
      select ${a.id}, ${a.botId}, ${a.conversationId}, ${a.userId}, ${a.type}, ${a.payload}, ${sql.lit(direction)},
        ${a.origin}, ${a.turnEventId}, ${a.now}, ${a.now}
      from counted
    )`,
  signal: sql`signal as (
      insert into conversation_signals (conversation_id, seq, frame, created_at)
      select ${a.conversationId}, signal_seq, ${a.frame}, ${a.now} from counted
    )`,
});

const MESSAGE_AT_ONCE = [
  'conversationId',
  'botId',
  'id',
  'userId',
  'type',
  'payload',
  'origin',
  'turnEventId',
  'now',
  'frame',
] as const satisfies readonly (keyof MessageAtOnce)[];

/**
 * A bot's message in a conversation of the chat channel (its turn's reply, the hot path), counted, stored
 * and signalled by one statement (data-modifying CTEs: `StoreSql.writesInWith`), where a transaction took
 * five round trips. A
 * conversation that is not found, or whose messages go out through another integration's channel,
 * changes nothing here, and the message takes the general path.
 */
const insertChatReply = prepare(
  [...MESSAGE_AT_ONCE, 'integration'],
  (_db, a: MessageAtOnce & { integration: string }) => {
    const { counted, message, signal } = messageCtes(a, 'outgoing', sql` and integration = ${a.integration}`);
    return sql<{ signal_seq: number | string }>`with ${counted}, ${message}, ${signal}
      select signal_seq from counted`;
  },
);

/**
 * What `insertIncoming` answers (no row when the conversation was not found): its event as stored, the
 * conversation's signal number and instant it took, and whether a turn of the conversation runs, held
 * until the statement's commit (event-queue.ts `runningTurnsIn`).
 */
type IncomingRow = Row<'events'> & { signal_seq: number | string; queued_at: string; behind_turn: boolean };

/** The claim the statement storing a user's message may make of its event (`claimsAsStored`). */
type ClaimTerms = { owner: string | null; leaseUntil: string | null; claimNow: string };

/**
 * A user's message with its `message_created` event, counted, stored, queued and signalled by one
 * statement; the event takes the instant the conversation's update stamped, `queued_at`. Given an owner,
 * the statement also claims the event for it as it stores it, when nothing of its conversation waits
 * before it and the conversation's row (locked first, `held`) is as its snapshot saw it
 * (event-queue.ts `claimsAsStored`; a turn whose end committed while the statement waited for it does not
 * hold it back). Behind a turn of the conversation that runs, it holds that turn (`runningTurnsIn`): the
 * turn's end claims the event, and no claim follows the commit. Otherwise the claim is a statement of
 * its own after the commit.
 */
const insertIncoming = (storeSql: StoreSql) =>
  prepare(
    [
      ...MESSAGE_AT_ONCE,
      'eventId',
      'eventType',
      'eventPayload',
      'eventStatus',
      'owner',
      'leaseUntil',
      'claimNow',
    ],
    (
      _db,
      a: MessageAtOnce & {
        eventId: string;
        eventType: string;
        eventPayload: string;
        eventStatus: string;
      } & ClaimTerms,
    ) => {
      const { counted, message, signal } = messageCtes(
        a,
        'incoming',
        sql` and exists (select 1 from held)`,
        storeSql,
      );
      const turns = runningTurnsIn(sql`${a.conversationId}`, a.claimNow);
      const owner = sql`cast(${a.owner} as text)`;
      const claims = sql`${owner} is not null and ${claimsAsStored(
        sql.ref('e'),
        sql`(select version from held)`,
        a.claimNow,
        turns.ended,
      )}`;
      const ifClaimed = (value: RawBuilder<unknown>) => sql`case when n.claims then ${value} end`;
      // The running turns are locked before the row: `held` asks for their count, which cannot be
      // answered without them.
      return sql<IncomingRow>`with ${turns.ctes}, held as (
        ${holdConversation(
          sql`${a.conversationId}`,
          sql` and bot_id = ${a.botId} and (select count(*) from (${turns.held}) t) >= 0`,
        )}
      ), ${counted}, ${message}, event as (
        insert into events
          (id, bot_id, workspace_id, type, payload, conversation_id, user_id, message_id, status, attempts,
            deliveries, lease_owner, lease_until, created_at, updated_at)
        select ${a.eventId}, ${a.botId}, ${workspaceOf(a.botId)}, ${a.eventType}, ${a.eventPayload},
          ${a.conversationId}, ${a.userId}, ${a.id}, ${a.eventStatus}, 0,
          case when n.claims then 1 else 0 end, ${ifClaimed(owner)},
          ${ifClaimed(sql`cast(${a.leaseUntil} as text)`)}, n.created_at, n.created_at
        from (select e.created_at, ${claims} as claims
          from (select cast(${a.eventId} as text) as id, cast(${a.conversationId} as text) as conversation_id,
            last_event_at as created_at, cast(${a.botId} as text) as bot_id from counted) e) n
        returning *
      ), ${signal}
      select e.*, c.signal_seq, c.last_event_at as queued_at, exists (${turns.held}) as behind_turn
      from counted c left join event e on true`;
    },
  );

export class Messages {
  /** Its records with their tags (read with others at a turn's start: see turn-records.ts). */
  readonly resource: TaggedResource<'messages', Message>;

  constructor(
    private readonly store: Store,
    private readonly users: Users,
    private readonly conversations: Conversations,
    private readonly events: Events,
    private readonly log: ConversationLog,
    private readonly channelOutbox: ChannelOutbox,
  ) {
    this.resource = new TaggedResource(store, {
      table: 'messages',
      name: 'Message',
      columns: MESSAGE_COLUMNS,
      toItem: toMessage,
    });
    this.insertIncoming = insertIncoming(store.sql);
    this.countings = countingsWith(store.sql);
  }

  private readonly insertIncoming: ReturnType<typeof insertIncoming>;
  private readonly countings: ReturnType<typeof countingsWith>;

  private get db() {
    return this.store.db;
  }

  /**
   * A message from the bot (userId = the bot's id: `outgoing`) or from one of its users
   * (`incoming`: the user joins the conversation and a `message_created` event is queued for the bot).
   */
  async create(actor: BotActor, body: CreateMessageBody, options: CreateOptions = {}): Promise<Message> {
    // A message that queues a turn is decided before it waits for a connection: refused, it costs none
    // (unless its caller, which read the store for it first, already asked).
    if (!isOutgoing(actor, body, options) && !options.silent && !options.entry)
      return this.events.entering(actor, (entry) =>
        this.createNow(actor, body, entry ? { ...options, entry } : options),
      );
    return this.createNow(actor, body, options);
  }

  private async createNow(
    actor: BotActor,
    body: CreateMessageBody,
    options: CreateOptions,
  ): Promise<Message> {
    const atOnce =
      (await this.createChatReply(actor, body, options)) ??
      (await this.createIncomingAtOnce(actor, body, options));
    if (atOnce) return atOnce;
    const inserted = await this.db.transaction().execute((trx) => this.insert(actor, body, options, trx));
    this.announce([inserted]);
    return inserted.message;
  }

  async getOrCreate(
    actor: BotActor,
    body: GetOrCreateMessageBody,
    options: CreateOptions = {},
  ): Promise<{ message: Message; created: boolean }> {
    const result = await this.getOrInsert(actor, body, options);
    this.announce(result.inserted ? [result.inserted] : []);
    return { message: result.message, created: result.inserted !== undefined };
  }

  /**
   * The user, the conversation and (when given) the incoming message, each found or created, in one
   * transaction: an integration's first call for a message it received.
   */
  async initializeIncoming(
    actor: BotActor,
    body: InitializeIncomingMessageBody,
  ): Promise<{ user: User; conversation: Conversation; message?: Message }> {
    const result = await this.db.transaction().execute(async (trx) => {
      const user = body.userId
        ? await this.users.get(actor, body.userId, trx)
        : (await this.users.getOrCreate(actor, body.user ?? { tags: {} }, trx)).user;
      const conversation = body.conversationId
        ? await this.conversations.get(actor, body.conversationId, trx)
        : (
            await this.conversations.getOrCreate(
              actor,
              body.conversation ?? { channel: 'channel', tags: {} },
              trx,
            )
          ).conversation;
      if (!body.message) return { user, conversation, inserted: [] };
      const found = await this.getOrInsert(
        actor,
        { ...body.message, userId: user.id, conversationId: conversation.id },
        {},
        trx,
      );
      return {
        user,
        conversation,
        message: found.message,
        inserted: found.inserted ? [found.inserted] : [],
      };
    });
    this.announce(result.inserted);
    return {
      user: result.user,
      conversation: result.conversation,
      ...(result.message && { message: result.message }),
    };
  }

  /**
   * Imports history, all or nothing: the messages keep their dates, queue nothing and reach no
   * listener; importing again with discriminating tags finds the messages already there.
   */
  async importMessages(actor: BotActor, messages: ImportedMessage[]): Promise<Message[]> {
    return this.db.transaction().execute(async (trx) => {
      // Locks are taken in one order by every import, so two imports cannot wait for each other.
      const order = messages.map((m, index) => ({ index, key: this.lockKey(m) }));
      order.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : a.index - b.index));
      const imported = new Array<Message>(messages.length);
      for (const { index } of order) {
        const m = messages[index] as ImportedMessage;
        const options = { createdAt: new Date(m.createdAt).toISOString(), silent: true };
        imported[index] = (await this.getOrInsert(actor, m, options, trx)).message;
      }
      return imported;
    });
  }

  get(actor: BotActor, messageId: string, db: Executor = this.db): Promise<Message> {
    return this.resource.get(actor, messageId, db);
  }

  async update(actor: BotActor, messageId: string, body: UpdateMessageBody): Promise<Message> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.resource.heldRow(actor, messageId, trx);
      const next: Row<'messages'> = {
        ...row,
        payload: body.payload === undefined ? row.payload : toJson(body.payload),
        updated_at: nowIso(),
      };
      await trx.updateTable('messages').set(next).where('id', '=', messageId).execute();
      return this.resource.withUpdatedTags(next, body.tags ?? {}, trx);
    });
  }

  async delete(actor: BotActor, messageId: string): Promise<void> {
    let signal: RecordedSignal | undefined;
    await this.resource.delete(actor, messageId, async (trx, found) => {
      await trx
        .updateTable('conversations')
        .set((eb) => ({ message_count: eb('message_count', '-', 1) }))
        .where('id', '=', found.conversation_id)
        .execute();
      signal = await this.log.record(trx, found.conversation_id, {
        type: 'message_deleted',
        messageId,
        userId: found.user_id,
      });
    });
    if (signal) this.log.publish([signal]);
  }

  /** The row of a message of this bot, for callers that check more than the Runtime API does. */
  row(actor: BotActor, messageId: string): Promise<Row<'messages'>> {
    return this.resource.requireRow(actor, messageId);
  }

  list(actor: BotActor, query: ListMessagesQuery): Promise<Page<Message>> {
    const { conversationId, afterDate, beforeDate } = query;
    return this.resource.list(actor, query, {
      tags: query.tags ?? {},
      where: [
        conversationId === undefined ? undefined : sql`messages.conversation_id = ${conversationId}`,
        afterDate ? sql`messages.created_at > ${afterDate}` : undefined,
        beforeDate ? sql`messages.created_at < ${beforeDate}` : undefined,
      ],
    });
  }

  /** The message with the discriminating tags in its conversation, or a new one (not announced yet). */
  private async getOrInsert(
    actor: BotActor,
    body: GetOrCreateMessageBody,
    options: CreateOptions,
    trx?: Transaction<Database>,
  ): Promise<{ message: Message; inserted?: Inserted }> {
    const tags = withoutNulls(body.tags);
    const discriminating = discriminatingTags(tags, body.discriminateByTags);
    let inserted: Inserted | undefined;
    const { item } = await this.resource.getOrCreate(
      actor,
      this.lockKey(body),
      { tags: discriminating, where: [sql`conversation_id = ${body.conversationId}`] },
      async (t) => {
        inserted = await this.insert(actor, { ...body, payload: body.payload ?? {}, tags }, options, t);
        return inserted.message;
      },
      trx,
    );
    return { message: item, ...(inserted && { inserted }) };
  }

  /**
   * A message that one statement of its own stores (`insertChatReply`, `insertChatReplyWritten`,
   * `insertIncoming`), as it will read back; undefined when it is not plain (silent, dated or tagged).
   */
  private plainMessage(
    actor: BotActor,
    body: CreateMessageBody,
    options: CreateOptions,
    direction: Message['direction'],
  ): { message: Message; stored: Omit<MessageAtOnce, 'frame'> } | undefined {
    const plain =
      !options.silent && options.createdAt === undefined && Object.keys(body.tags ?? {}).length === 0;
    if (!plain) return undefined;
    const now = nowIso();
    const payload = toJson(body.payload);
    const turnEventId = turnEventOf(actor, options);
    const message: Message = {
      id: options.id ?? newId('message'),
      createdAt: now,
      updatedAt: now,
      type: body.type,
      // As read back from the store, like every message returned.
      payload: fromJson<JsonObject>(payload),
      direction,
      userId: body.userId,
      conversationId: body.conversationId,
      tags: {},
      ...(body.origin !== undefined && { origin: body.origin }),
      ...(turnEventId !== null && { eventId: turnEventId }),
    };
    const stored = {
      conversationId: body.conversationId,
      botId: actor.botId,
      id: message.id,
      userId: body.userId,
      type: body.type,
      payload,
      origin: body.origin ?? null,
      turnEventId,
      now,
    };
    return { message, stored };
  }

  /**
   * A bot's message without tags in a conversation of the chat channel, in one statement
   * (`insertChatReply` where statements write in their WITH clauses, `insertChatReplyWritten` where the
   * store has its write views); undefined when the message is not that (or the conversation not found),
   * for the general path to create it or say why not.
   */
  private async createChatReply(
    actor: BotActor,
    body: CreateMessageBody,
    options: CreateOptions,
  ): Promise<Message | undefined> {
    const { writesInWith, writeViews } = this.store.sql;
    const plain =
      body.userId === actor.botId && (writesInWith || writeViews)
        ? this.plainMessage(actor, body, options, 'outgoing')
        : undefined;
    if (!plain) return undefined;
    const { message, stored } = plain;
    const signal = createdSignal(message, true);
    // A reply answers work already queued: it takes the turns' connections, not the requests'.
    const db = this.store.turnDb;
    const frame = await this.log.frameOf(db, body.conversationId, signal);
    const integration = DEFAULT_INTEGRATION;
    const [counted] = writesInWith
      ? (await insertChatReply.execute(db, { ...stored, frame, integration })).rows
      : (
          await insertChatReplyWritten.execute(db, {
            id: stored.id,
            bot_id: stored.botId,
            conversation_id: stored.conversationId,
            user_id: stored.userId,
            type: stored.type,
            payload: stored.payload,
            direction: 'outgoing',
            origin: stored.origin,
            event_id: stored.turnEventId,
            created_at: stored.now,
            updated_at: stored.now,
            integration,
            signal_frame: frame,
          })
        ).rows;
    if (counted?.signal_seq == null) return undefined;
    this.log.publish([recorded(body.conversationId, Number(counted.signal_seq), frame, signal)]);
    return message;
  }

  /**
   * Where statements write in their WITH clauses, a message without tags from a user the caller found
   * taking part in the conversation (the Chat API's), with its event for the bot and its signal, in one statement (`insertIncoming`) and
   * the event's claim; undefined when the message is not that, for the general path.
   */
  private async createIncomingAtOnce(
    actor: BotActor,
    body: CreateMessageBody,
    options: CreateOptions,
  ): Promise<Message | undefined> {
    const plain =
      body.userId !== actor.botId && options.participant === true && this.store.sql.writesInWith
        ? this.plainMessage(actor, body, options, 'incoming')
        : undefined;
    if (!plain) return undefined;
    const { message, stored } = plain;
    const event = eventRow(
      actor.botId,
      {
        type: 'message_created',
        payload: { message },
        conversationId: body.conversationId,
        userId: body.userId,
        messageId: message.id,
      },
      stored.now,
    );
    const signal = createdSignal(message, false);
    const frame = await this.log.frameOf(this.db, body.conversationId, signal);
    const values = {
      ...stored,
      frame,
      eventId: event.id,
      eventType: event.type,
      eventPayload: event.payload,
      eventStatus: event.status,
    };
    const store = async (db: Executor, terms?: { owner: string; leaseUntil: string }) => {
      const claim = {
        owner: terms?.owner ?? null,
        leaseUntil: terms?.leaseUntil ?? null,
        claimNow: nowIso(),
      };
      const [counted] = (await this.insertIncoming.execute(db, { ...values, ...claim })).rows;
      if (!counted) throw notFound('Conversation', body.conversationId);
      const signals = [recorded(body.conversationId, Number(counted.signal_seq), frame, signal)];
      return { signals, queuedAt: counted.queued_at, stored: counted };
    };
    let inserted: Inserted;
    if (await this.events.writesBeside(actor, event.type)) {
      inserted = await this.db.transaction().execute(async (trx): Promise<Inserted> => {
        await this.events.admit(actor, trx, options.entry);
        const { signals, queuedAt } = await store(trx);
        const stamped = toEvent({ ...event, created_at: queuedAt, updated_at: queuedAt });
        return { message, signals, queued: await this.events.insertedForTurn(actor, stamped, trx) };
      });
    } else {
      // Nothing else to write with it: the statement is its own transaction (no begin, no commit: two
      // round trips fewer), and the event is claimed once it is committed. A process that stops between
      // the two leaves the event pending, for any engine's next claim.
      await this.events.admit(actor, this.db, options.entry);
      const { signals, stored } = await store(this.db, this.events.claimTermsAsStored(actor));
      const queued = await this.events.storedForTurn(actor, event.id, stored, stored.behind_turn);
      inserted = { message, signals, ...(queued && { queued }) };
    }
    this.announce([inserted]);
    return inserted.message;
  }

  private lockKey(body: {
    conversationId: string;
    tags?: Record<string, string | null>;
    discriminateByTags?: string[];
  }): string {
    return `${body.conversationId}:${toJson(discriminatingTags(withoutNulls(body.tags), body.discriminateByTags))}`;
  }

  /** After the commit: the signals to the listeners, and a wake-up to the engine for queued events. */
  private announce(inserted: Inserted[]): void {
    this.log.publish(inserted.flatMap((i) => i.signals));
    const queued = inserted.flatMap((i) => (i.queued ? [i.queued] : []));
    if (queued.length > 0) this.events.notifyQueued(queued);
    if (inserted.some((i) => i.toChannel)) this.channelOutbox.queued();
  }

  private async insert(
    actor: BotActor,
    body: CreateMessageBody,
    options: CreateOptions,
    trx: Executor,
  ): Promise<Inserted> {
    const now = nowIso();
    const outgoing = isOutgoing(actor, body, options);
    const joins = !outgoing && !options.participant;
    // The message's signal is the first this insert records unless its user joins the conversation
    // (that signal comes first): then counting the message also takes the signal's number.
    const numbersSignal = !options.silent && !joins;
    const queuesEvent = !outgoing && !options.silent;
    // Counting the message is also how the conversation is found: one statement, not a read and a write.
    const { countings } = this;
    const counting = queuesEvent
      ? numbersSignal
        ? countings.messageSignalAndEvent
        : countings.messageAndEvent
      : numbersSignal
        ? countings.messageAndSignal
        : countings.message;
    const [counted] = (
      await counting.execute(trx, { conversationId: body.conversationId, botId: actor.botId, now })
    ).rows;
    if (!counted) throw notFound('Conversation', body.conversationId);
    // A user the caller found taking part in the conversation exists: no need to look again.
    if (joins && !(await this.users.exists(actor, body.userId, trx))) throw notFound('User', body.userId);
    const row: Row<'messages'> = {
      id: options.id ?? newId('message'),
      bot_id: actor.botId,
      conversation_id: body.conversationId,
      user_id: body.userId,
      type: body.type,
      payload: toJson(body.payload),
      direction: outgoing ? 'outgoing' : 'incoming',
      origin: body.origin ?? null,
      event_id: turnEventOf(actor, options),
      created_at: options.createdAt ?? now,
      updated_at: now,
    };
    const message = toMessage(row, body.tags ?? {});
    const created = options.silent ? undefined : createdSignal(message, outgoing);
    // Where the store writes a message and its signal in one statement, the signal is numbered by the count.
    const withSignal =
      created && numbersSignal && this.store.sql.writeViews
        ? {
            seq: Number(counted.signal_seq),
            frame: await this.log.frameOf(trx, body.conversationId, created),
          }
        : undefined;
    if (withSignal)
      await insertMessageWithSignal.execute(trx, {
        ...row,
        signal_seq: withSignal.seq,
        signal_frame: withSignal.frame,
      });
    else await insertMessage.execute(trx, row);
    await insertTags(trx, row.id, body.tags ?? {});
    // The bot's message in a conversation of an integration goes out through the integration's channel
    // (unless the integration wrote it itself). Parley's own chat channel needs no send.
    const toChannel =
      outgoing &&
      counted.integration !== DEFAULT_INTEGRATION &&
      counted.integration !== actor.integration &&
      (await this.channelOutbox.queue(trx, actor.botId, counted.integration, row.id));
    const signals: RecordedSignal[] = [];
    let queued: QueuedNotice | undefined;
    if (joins) {
      const joined = await this.conversations.ensureParticipant(body.conversationId, body.userId, trx);
      if (joined) signals.push(joined);
    }
    if (queuesEvent) {
      const { notice } = await this.events.queueForTurn(
        actor,
        {
          type: 'message_created',
          payload: { message },
          conversationId: body.conversationId,
          userId: body.userId,
          messageId: row.id,
        },
        trx,
        counted.last_event_at ?? undefined,
        options.entry,
      );
      queued = notice;
    }
    const extra = { ...(queued && { queued }), ...(toChannel && { toChannel }) };
    if (!created) return { message, signals, ...extra };
    const signal = withSignal
      ? recorded(body.conversationId, withSignal.seq, withSignal.frame, created)
      : numbersSignal
        ? await this.log.recordAt(trx, body.conversationId, Number(counted.signal_seq), created)
        : await this.log.record(trx, body.conversationId, created);
    return { message, signals: [...signals, signal], ...extra };
  }
}

/** What listeners are told of a new message. */
function createdSignal(message: Message, isBot: boolean): LiveSignal {
  return {
    type: 'message_created',
    message: {
      id: message.id,
      createdAt: message.createdAt,
      type: message.type,
      payload: message.payload,
      userId: message.userId,
    },
    isBot,
  };
}
