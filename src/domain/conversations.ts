import { sql } from 'kysely';
import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { Executor, Store } from '../store/index.ts';
import type { ConversationsTable } from '../store/schema.ts';
import type { BotActor } from './actors.ts';
import { notFound } from './errors.ts';
import { newId } from './ids.ts';
import { fromJson, mergeMap, toJson, withoutNulls } from './json.ts';
import { withKeyLock } from './locks.ts';
import { Keyset, pageSizeOf } from './pagination.ts';
import type { Page, PageRequest, SortDirection } from './pagination.ts';
import { TagChangeMap, TagMap, Timestamp } from './schemas.ts';
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
import { deleteStatesOf } from './states.ts';
import type { User, Users } from './users.ts';

/** The integration of conversations created without one: Parley's built-in chat channel. */
export const DEFAULT_INTEGRATION = 'chat';

export const ConversationSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  channel: Type.String(),
  integration: Type.String(),
  tags: TagMap,
  messageCount: Type.Integer(),
  currentTaskId: Type.Optional(Type.String()),
  currentWorkflowId: Type.Optional(Type.String()),
  properties: Type.Optional(TagMap),
});
export type Conversation = Static<typeof ConversationSchema>;

export const CreateConversationBodySchema = Type.Object({
  channel: Type.String({ minLength: 1, maxLength: 200 }),
  tags: Type.Optional(TagMap),
  integrationName: Type.Optional(Type.String({ maxLength: 200 })),
  properties: Type.Optional(TagMap),
});
export type CreateConversationBody = Static<typeof CreateConversationBodySchema>;

export const GetOrCreateConversationBodySchema = Type.Object({
  channel: Type.String({ minLength: 1, maxLength: 200 }),
  tags: Type.Optional(TagChangeMap),
  integrationName: Type.Optional(Type.String({ maxLength: 200 })),
  properties: Type.Optional(TagChangeMap),
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
});
export type GetOrCreateConversationBody = Static<typeof GetOrCreateConversationBodySchema>;

export const UpdateConversationBodySchema = Type.Object({
  currentTaskId: Type.Optional(Type.String()),
  currentWorkflowId: Type.Optional(Type.String()),
  tags: Type.Optional(TagChangeMap),
  properties: Type.Optional(TagChangeMap),
});
export type UpdateConversationBody = Static<typeof UpdateConversationBodySchema>;

export interface ListConversationsQuery extends PageRequest {
  sortField?: 'createdAt' | 'updatedAt';
  sortDirection?: SortDirection;
  tags?: Record<string, string>;
  participantIds?: string[];
  integrationName?: string;
  channel?: string;
  afterDate?: string;
  beforeDate?: string;
  minMessageCount?: number;
  maxMessageCount?: number;
}

const COLUMNS = { createdAt: 'conversations.created_at', updatedAt: 'conversations.updated_at' } as const;

function toConversation(row: ConversationsTable, tags: Record<string, string>): Conversation {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    channel: row.channel,
    integration: row.integration,
    tags,
    messageCount: Number(row.message_count),
    ...(row.current_task_id !== null && { currentTaskId: row.current_task_id }),
    ...(row.current_workflow_id !== null && { currentWorkflowId: row.current_workflow_id }),
    properties: fromJson<Record<string, string>>(row.properties),
  };
}

export class Conversations {
  constructor(
    private readonly store: Store,
    private readonly users: Users,
    private readonly log: ConversationLog,
  ) {}

  private get db() {
    return this.store.db;
  }

  async create(
    actor: BotActor,
    body: CreateConversationBody,
    integration: string | undefined,
    db: Executor = this.db,
  ): Promise<Conversation> {
    const now = nowIso();
    const row: ConversationsTable = {
      id: newId('conversation'),
      bot_id: actor.botId,
      channel: body.channel,
      integration: body.integrationName ?? integration ?? DEFAULT_INTEGRATION,
      properties: toJson(body.properties ?? {}),
      message_count: 0,
      signal_seq: 0,
      current_task_id: null,
      current_workflow_id: null,
      created_at: now,
      updated_at: now,
    };
    await db.insertInto('conversations').values(row).execute();
    await applyTagChanges(db, row.id, body.tags ?? {});
    return toConversation(row, body.tags ?? {});
  }

  async get(actor: BotActor, conversationId: string, db: Executor = this.db): Promise<Conversation> {
    const row = await this.requireRow(actor, conversationId, db);
    return toConversation(row, (await loadTags(db, [row.id])).get(row.id) ?? {});
  }

  async getOrCreate(
    actor: BotActor,
    body: GetOrCreateConversationBody,
    integration: string | undefined,
  ): Promise<{ conversation: Conversation; created: boolean }> {
    const tags = withoutNulls(body.tags);
    const discriminating = discriminatingTags(tags, body.discriminateByTags);
    const integrationName = body.integrationName ?? integration ?? DEFAULT_INTEGRATION;
    const key = `conversation:${actor.botId}:${body.channel}:${integrationName}:${toJson(discriminating)}`;
    return withKeyLock(this.store, key, async (trx) => {
      const existing = Object.keys(discriminating).length
        ? await findByTags(trx, 'conversations', actor.botId, discriminating, [
            sql`conversations.channel = ${body.channel}`,
            sql`conversations.integration = ${integrationName}`,
          ])
        : undefined;
      if (existing) return { conversation: await this.get(actor, existing, trx), created: false };
      const conversation = await this.create(
        actor,
        { channel: body.channel, integrationName, tags, properties: withoutNulls(body.properties) },
        integration,
        trx,
      );
      return { conversation, created: true };
    });
  }

  async update(actor: BotActor, conversationId: string, body: UpdateConversationBody): Promise<Conversation> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, conversationId, trx);
      const next: ConversationsTable = {
        ...row,
        current_task_id: body.currentTaskId ?? row.current_task_id,
        current_workflow_id: body.currentWorkflowId ?? row.current_workflow_id,
        properties: toJson(mergeMap(fromJson<Record<string, string>>(row.properties), body.properties)),
        updated_at: nowIso(),
      };
      await trx.updateTable('conversations').set(next).where('id', '=', conversationId).execute();
      return toConversation(next, await updateTags(trx, conversationId, body.tags ?? {}));
    });
  }

  /** Deletes the conversation and everything in it: messages, events, participants, states. */
  async delete(actor: BotActor, conversationId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.requireRow(actor, conversationId, trx);
      const messages = await trx
        .selectFrom('messages')
        .select('id')
        .where('conversation_id', '=', conversationId)
        .execute();
      await deleteTags(trx, [conversationId, ...messages.map((m) => m.id)]);
      await trx.deleteFrom('events').where('conversation_id', '=', conversationId).execute();
      await deleteStatesOf(trx, actor.botId, 'conversation', conversationId);
      // Messages and participants go with the conversation (foreign keys cascade).
      await trx.deleteFrom('conversations').where('id', '=', conversationId).execute();
    });
  }

  async list(actor: BotActor, query: ListConversationsQuery): Promise<Page<Conversation>> {
    const pageSize = pageSizeOf(query);
    const sortField = query.sortField ?? 'createdAt';
    const keyset = new Keyset(COLUMNS[sortField], query.sortDirection ?? 'desc', 'conversations.id');
    const cursor = keyset.decode(query.nextToken);
    let select = this.db
      .selectFrom('conversations')
      .selectAll('conversations')
      .where('conversations.bot_id', '=', actor.botId);
    for (const participant of query.participantIds ?? []) {
      select = select.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('participants')
            .select('participants.user_id')
            .whereRef('participants.conversation_id', '=', 'conversations.id')
            .where('participants.user_id', '=', participant),
        ),
      );
    }
    for (const condition of hasTags('conversations.id', query.tags ?? {})) select = select.where(condition);
    if (query.integrationName !== undefined) select = select.where('integration', '=', query.integrationName);
    if (query.channel !== undefined) select = select.where('channel', '=', query.channel);
    if (query.afterDate) select = select.where(COLUMNS[sortField], '>', query.afterDate);
    if (query.beforeDate) select = select.where(COLUMNS[sortField], '<', query.beforeDate);
    if (query.minMessageCount !== undefined)
      select = select.where('message_count', '>=', query.minMessageCount);
    if (query.maxMessageCount !== undefined)
      select = select.where('message_count', '<=', query.maxMessageCount);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy(COLUMNS[sortField], keyset.direction)
      .orderBy('conversations.id', keyset.direction)
      .limit(pageSize + 1)
      .execute();
    return withTags(
      this.db,
      keyset.page(rows, pageSize, (r) => [sortField === 'createdAt' ? r.created_at : r.updated_at, r.id]),
      toConversation,
    );
  }

  // Participants

  async addParticipant(actor: BotActor, conversationId: string, userId: string): Promise<User> {
    const { user, signal } = await this.db.transaction().execute(async (trx) => {
      await this.requireRow(actor, conversationId, trx);
      const found = await this.users.get(actor, userId, trx);
      return { user: found, signal: await this.ensureParticipant(conversationId, userId, trx) };
    });
    if (signal) this.log.publish([signal]);
    return user;
  }

  /** Adds the user unless already there; when added, records the `participant_added` signal to publish. */
  async ensureParticipant(
    conversationId: string,
    userId: string,
    db: Executor,
  ): Promise<RecordedSignal | undefined> {
    const result = await db
      .insertInto('participants')
      .values({ conversation_id: conversationId, user_id: userId, created_at: nowIso() })
      .onConflict((oc) => oc.columns(['conversation_id', 'user_id']).doNothing())
      .executeTakeFirst();
    if (Number(result.numInsertedOrUpdatedRows ?? 0) === 0) return undefined;
    return this.log.record(db, conversationId, { type: 'participant_added', userId });
  }

  async getParticipant(actor: BotActor, conversationId: string, userId: string): Promise<User> {
    await this.requireRow(actor, conversationId, this.db);
    if (!(await this.isParticipant(conversationId, userId))) throw notFound('Participant', userId);
    return this.users.get(actor, userId);
  }

  async isParticipant(conversationId: string, userId: string, db: Executor = this.db): Promise<boolean> {
    const row = await db
      .selectFrom('participants')
      .select('user_id')
      .where('conversation_id', '=', conversationId)
      .where('user_id', '=', userId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async removeParticipant(actor: BotActor, conversationId: string, userId: string): Promise<void> {
    const signal = await this.db.transaction().execute(async (trx) => {
      await this.requireRow(actor, conversationId, trx);
      const result = await trx
        .deleteFrom('participants')
        .where('conversation_id', '=', conversationId)
        .where('user_id', '=', userId)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) throw notFound('Participant', userId);
      return this.log.record(trx, conversationId, { type: 'participant_removed', userId });
    });
    this.log.publish([signal]);
  }

  async listParticipants(actor: BotActor, conversationId: string, request: PageRequest): Promise<Page<User>> {
    await this.requireRow(actor, conversationId, this.db);
    return this.users.list(actor, {
      ...request,
      conversationId,
      sortField: 'createdAt',
      sortDirection: 'asc',
    });
  }

  async requireRow(
    actor: BotActor,
    conversationId: string,
    db: Executor = this.db,
  ): Promise<ConversationsTable> {
    const row = await db
      .selectFrom('conversations')
      .selectAll()
      .where('id', '=', conversationId)
      .where('bot_id', '=', actor.botId)
      .executeTakeFirst();
    if (!row) throw notFound('Conversation', conversationId);
    return row;
  }
}
