import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { Executor, Store } from '../store/index.ts';
import type { MessagesTable } from '../store/schema.ts';
import type { BotActor } from './actors.ts';
import type { Conversations } from './conversations.ts';
import { notFound } from './errors.ts';
import type { Events } from './events.ts';
import { ScheduleSchema } from './events.ts';
import { newId } from './ids.ts';
import { fromJson, toJson, withoutNulls } from './json.ts';
import { withKeyLock } from './locks.ts';
import { Keyset, pageSizeOf } from './pagination.ts';
import type { Page, PageRequest } from './pagination.ts';
import { JsonObject, TagChangeMap, TagMap, Timestamp } from './schemas.ts';
import type { ConversationLog, RecordedSignal } from './live.ts';
import {
  applyTagChanges,
  deleteTags,
  discriminatingTags,
  findByTags,
  hasTags,
  loadTags,
  withTags,
  updateTags,
} from './tags.ts';
import { nowIso } from './time.ts';
import type { Users } from './users.ts';

export const MessageSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  type: Type.String(),
  payload: JsonObject,
  direction: Type.Union([Type.Literal('incoming'), Type.Literal('outgoing')]),
  userId: Type.String(),
  conversationId: Type.String(),
  tags: TagMap,
  origin: Type.Optional(Type.Literal('synthetic')),
});
export type Message = Static<typeof MessageSchema>;

const MessageType = Type.String({ minLength: 1, maxLength: 200 });

export const CreateMessageBodySchema = Type.Object({
  payload: JsonObject,
  userId: Type.String(),
  conversationId: Type.String(),
  type: MessageType,
  tags: Type.Optional(TagMap),
  schedule: Type.Optional(ScheduleSchema),
  origin: Type.Optional(Type.Literal('synthetic')),
});
export type CreateMessageBody = Static<typeof CreateMessageBodySchema>;

export const GetOrCreateMessageBodySchema = Type.Object({
  payload: Type.Optional(JsonObject),
  userId: Type.String(),
  conversationId: Type.String(),
  type: MessageType,
  tags: Type.Optional(TagChangeMap),
  schedule: Type.Optional(ScheduleSchema),
  origin: Type.Optional(Type.Literal('synthetic')),
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
});
export type GetOrCreateMessageBody = Static<typeof GetOrCreateMessageBodySchema>;

export const UpdateMessageBodySchema = Type.Object({
  tags: Type.Optional(TagChangeMap),
  payload: Type.Optional(JsonObject),
});
export type UpdateMessageBody = Static<typeof UpdateMessageBodySchema>;

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
  /** Free data a Chat API client attaches to its message. */
  metadata?: Record<string, unknown>;
}

function toMessage(row: MessagesTable, tags: Record<string, string>): Message {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    type: row.type,
    payload: fromJson<Record<string, unknown>>(row.payload),
    direction: row.direction as Message['direction'],
    userId: row.user_id,
    conversationId: row.conversation_id,
    tags,
    ...(row.origin === 'synthetic' && { origin: 'synthetic' as const }),
  };
}

const keyset = new Keyset('messages.created_at', 'desc', 'messages.id');

export class Messages {
  constructor(
    private readonly store: Store,
    private readonly users: Users,
    private readonly conversations: Conversations,
    private readonly events: Events,
    private readonly log: ConversationLog,
  ) {}

  private get db() {
    return this.store.db;
  }

  /**
   * A message from the bot (userId = the bot's id: `outgoing`) or from one of its users
   * (`incoming`: the user joins the conversation and a `message_created` event is queued for the bot).
   */
  async create(actor: BotActor, body: CreateMessageBody, options: CreateOptions = {}): Promise<Message> {
    const { message, signals } = await this.db
      .transaction()
      .execute((trx) => this.insert(actor, body, options, trx));
    this.log.publish(signals);
    if (message.direction === 'incoming' && !options.silent) this.events.notifyQueued();
    return message;
  }

  async getOrCreate(
    actor: BotActor,
    body: GetOrCreateMessageBody,
    options: CreateOptions = {},
  ): Promise<{ message: Message; created: boolean }> {
    const tags = withoutNulls(body.tags);
    const discriminating = discriminatingTags(tags, body.discriminateByTags);
    const key = `message:${actor.botId}:${body.conversationId}:${toJson(discriminating)}`;
    const result = await withKeyLock(this.store, key, async (trx) => {
      const existing = Object.keys(discriminating).length
        ? await findByTags(trx, 'messages', actor.botId, discriminating, [
            sql`messages.conversation_id = ${body.conversationId}`,
          ])
        : undefined;
      if (existing) return { message: await this.get(actor, existing, trx), created: false, signals: [] };
      const inserted = await this.insert(actor, { ...body, payload: body.payload ?? {}, tags }, options, trx);
      return { ...inserted, created: true };
    });
    if (result.created) {
      this.log.publish(result.signals);
      if (result.message.direction === 'incoming' && !options.silent) this.events.notifyQueued();
    }
    return { message: result.message, created: result.created };
  }

  async get(actor: BotActor, messageId: string, db: Executor = this.db): Promise<Message> {
    const row = await this.requireRow(actor, messageId, db);
    return toMessage(row, (await loadTags(db, [row.id])).get(row.id) ?? {});
  }

  async update(actor: BotActor, messageId: string, body: UpdateMessageBody): Promise<Message> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, messageId, trx);
      const next: MessagesTable = {
        ...row,
        payload: body.payload === undefined ? row.payload : toJson(body.payload),
        updated_at: nowIso(),
      };
      await trx.updateTable('messages').set(next).where('id', '=', messageId).execute();
      return toMessage(next, await updateTags(trx, messageId, body.tags ?? {}));
    });
  }

  async delete(actor: BotActor, messageId: string): Promise<void> {
    const signal = await this.db.transaction().execute(async (trx) => {
      const found = await this.requireRow(actor, messageId, trx);
      await deleteTags(trx, [messageId]);
      await trx.deleteFrom('messages').where('id', '=', messageId).execute();
      await trx
        .updateTable('conversations')
        .set((eb) => ({ message_count: eb('message_count', '-', 1) }))
        .where('id', '=', found.conversation_id)
        .execute();
      return this.log.record(trx, found.conversation_id, {
        type: 'message_deleted',
        messageId,
        userId: found.user_id,
      });
    });
    this.log.publish([signal]);
  }

  /** The row of a message of this bot, for callers that check more than the Runtime API does. */
  async row(actor: BotActor, messageId: string): Promise<MessagesTable> {
    return this.requireRow(actor, messageId, this.db);
  }

  async list(actor: BotActor, query: ListMessagesQuery): Promise<Page<Message>> {
    const pageSize = pageSizeOf(query);
    const cursor = keyset.decode(query.nextToken);
    let select = this.db
      .selectFrom('messages')
      .selectAll('messages')
      .where('messages.bot_id', '=', actor.botId);
    if (query.conversationId !== undefined)
      select = select.where('conversation_id', '=', query.conversationId);
    for (const condition of hasTags('messages.id', query.tags ?? {})) select = select.where(condition);
    if (query.afterDate) select = select.where('messages.created_at', '>', query.afterDate);
    if (query.beforeDate) select = select.where('messages.created_at', '<', query.beforeDate);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy('messages.created_at', 'desc')
      .orderBy('messages.id', 'desc')
      .limit(pageSize + 1)
      .execute();
    return withTags(
      this.db,
      keyset.page(rows, pageSize, (r) => [r.created_at, r.id]),
      toMessage,
    );
  }

  private async insert(
    actor: BotActor,
    body: CreateMessageBody,
    options: CreateOptions,
    trx: Executor,
  ): Promise<{ message: Message; signals: RecordedSignal[] }> {
    await this.conversations.requireRow(actor, body.conversationId, trx);
    const outgoing = body.userId === actor.botId;
    if (!outgoing && !(await this.users.exists(actor, body.userId, trx))) throw notFound('User', body.userId);
    const now = nowIso();
    const row: MessagesTable = {
      id: newId('message'),
      bot_id: actor.botId,
      conversation_id: body.conversationId,
      user_id: body.userId,
      type: body.type,
      payload: toJson(body.payload),
      direction: outgoing ? 'outgoing' : 'incoming',
      origin: body.origin ?? null,
      metadata: options.metadata ? toJson(options.metadata) : null,
      created_at: options.createdAt ?? now,
      updated_at: now,
    };
    await trx.insertInto('messages').values(row).execute();
    await applyTagChanges(trx, row.id, body.tags ?? {});
    await trx
      .updateTable('conversations')
      .set((eb) => ({ message_count: eb('message_count', '+', 1), updated_at: now }))
      .where('id', '=', body.conversationId)
      .execute();
    const message = toMessage(row, body.tags ?? {});
    const signals: RecordedSignal[] = [];
    if (!outgoing) {
      const joined = await this.conversations.ensureParticipant(body.conversationId, body.userId, trx);
      if (joined) signals.push(joined);
      if (!options.silent) {
        await this.events.queue(
          actor.botId,
          {
            type: 'message_created',
            payload: { message },
            conversationId: body.conversationId,
            userId: body.userId,
            messageId: row.id,
          },
          trx,
        );
      }
    }
    if (options.silent) return { message, signals };
    const signal = await this.log.record(trx, body.conversationId, {
      type: 'message_created',
      message: {
        id: message.id,
        createdAt: message.createdAt,
        payload: { type: message.type, ...message.payload },
        userId: message.userId,
        ...(options.metadata && { metadata: options.metadata }),
      },
      isBot: outgoing,
    });
    return { message, signals: [...signals, signal] };
  }

  private async requireRow(actor: BotActor, messageId: string, db: Executor): Promise<MessagesTable> {
    const row = await db
      .selectFrom('messages')
      .selectAll()
      .where('id', '=', messageId)
      .where('bot_id', '=', actor.botId)
      .executeTakeFirst();
    if (!row) throw notFound('Message', messageId);
    return row;
  }
}
