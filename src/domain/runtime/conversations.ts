import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import { everyKey } from '../../store/prepared.ts';
import type { Database, Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import { notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, mergeMap, toJson, withoutNulls } from '../shared/json.ts';
import type { Page, PageRequest, SortDirection } from '../shared/pagination.ts';
import type { ConversationLog, RecordedSignal } from '../live/conversation-log.ts';
import { TaggedResource } from '../shared/tagged-resource.ts';
import { insertTags, deleteTags, discriminatingTags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import type { Users } from './users.ts';
import type {
  User,
  Conversation,
  CreateConversationBody,
  GetOrCreateConversationBody,
  UpdateConversationBody,
} from './schemas.ts';

/** The integration of conversations created without one: Parley's built-in chat channel. */
export const DEFAULT_INTEGRATION = 'chat';

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

const COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

function toConversation(row: Row<'conversations'>, tags: Record<string, string>): Conversation {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    channel: row.channel,
    integration: row.integration,
    tags,
    messageCount: row.message_count,
    ...(row.current_task_id !== null && { currentTaskId: row.current_task_id }),
    ...(row.current_workflow_id !== null && { currentWorkflowId: row.current_workflow_id }),
    properties: fromJson<Record<string, string>>(row.properties),
  };
}

export class Conversations {
  /** Its records with their tags (read with others at a turn's start: see turn-records.ts). */
  readonly resource: TaggedResource<'conversations', Conversation>;

  constructor(
    private readonly store: Store,
    private readonly users: Users,
    private readonly log: ConversationLog,
  ) {
    this.resource = new TaggedResource(store, {
      table: 'conversations',
      name: 'Conversation',
      states: 'conversation',
      columns: everyKey<Row<'conversations'>>()([
        'id',
        'bot_id',
        'channel',
        'integration',
        'properties',
        'message_count',
        'signal_seq',
        'current_task_id',
        'current_workflow_id',
        'last_event_at',
        'created_at',
        'updated_at',
      ]),
      toItem: toConversation,
    });
  }

  private get db() {
    return this.store.db;
  }

  /** The integration is the body's, else the one acting for the bot, else Parley's chat channel. */
  async create(actor: BotActor, body: CreateConversationBody, db: Executor = this.db): Promise<Conversation> {
    const now = nowIso();
    const row: Row<'conversations'> = {
      id: newId('conversation'),
      bot_id: actor.botId,
      channel: body.channel,
      integration: body.integrationName ?? actor.integration ?? DEFAULT_INTEGRATION,
      properties: toJson(body.properties ?? {}),
      message_count: 0,
      signal_seq: 0,
      current_task_id: null,
      current_workflow_id: null,
      last_event_at: null,
      created_at: now,
      updated_at: now,
    };
    await db.insertInto('conversations').values(row).execute();
    await insertTags(db, row.id, body.tags ?? {});
    return toConversation(row, body.tags ?? {});
  }

  get(actor: BotActor, conversationId: string, db: Executor = this.db): Promise<Conversation> {
    return this.resource.get(actor, conversationId, db);
  }

  /** `trx`: a transaction to run in (the initialization of incoming messages). */
  async getOrCreate(
    actor: BotActor,
    body: GetOrCreateConversationBody,
    trx?: Transaction<Database>,
  ): Promise<{ conversation: Conversation; created: boolean }> {
    const tags = withoutNulls(body.tags);
    const discriminating = discriminatingTags(tags, body.discriminateByTags);
    const integrationName = body.integrationName ?? actor.integration ?? DEFAULT_INTEGRATION;
    const { item, created } = await this.resource.getOrCreate(
      actor,
      `${body.channel}:${integrationName}:${toJson(discriminating)}`,
      {
        tags: discriminating,
        where: [sql`channel = ${body.channel}`, sql`integration = ${integrationName}`],
      },
      (t) =>
        this.create(
          actor,
          { channel: body.channel, integrationName, tags, properties: withoutNulls(body.properties) },
          t,
        ),
      trx,
    );
    return { conversation: item, created };
  }

  async update(actor: BotActor, conversationId: string, body: UpdateConversationBody): Promise<Conversation> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.resource.heldRow(actor, conversationId, trx);
      const next: Row<'conversations'> = {
        ...row,
        current_task_id: body.currentTaskId ?? row.current_task_id,
        current_workflow_id: body.currentWorkflowId ?? row.current_workflow_id,
        properties: toJson(mergeMap(fromJson<Record<string, string>>(row.properties), body.properties)),
        updated_at: nowIso(),
      };
      await trx.updateTable('conversations').set(next).where('id', '=', conversationId).execute();
      return this.resource.withUpdatedTags(next, body.tags ?? {}, trx);
    });
  }

  /** Deletes the conversation and everything in it: messages, events, participants, states. */
  async delete(actor: BotActor, conversationId: string): Promise<void> {
    await this.resource.delete(actor, conversationId, async (trx) => {
      const messages = await trx
        .selectFrom('messages')
        .select('id')
        .where('conversation_id', '=', conversationId)
        .execute();
      await deleteTags(
        trx,
        messages.map((m) => m.id),
      );
      await trx.deleteFrom('events').where('conversation_id', '=', conversationId).execute();
      // Messages and participants go with the conversation (foreign keys cascade).
    });
  }

  list(actor: BotActor, query: ListConversationsQuery): Promise<Page<Conversation>> {
    const sort = COLUMNS[query.sortField ?? 'createdAt'];
    const range = sql.ref(`conversations.${sort}`);
    const { integrationName, channel, afterDate, beforeDate, minMessageCount, maxMessageCount } = query;
    return this.resource.list(actor, query, {
      sort,
      direction: query.sortDirection ?? 'desc',
      tags: query.tags ?? {},
      where: [
        ...(query.participantIds ?? []).map(
          (userId) =>
            sql`exists (select 1 from participants where participants.conversation_id = conversations.id and participants.user_id = ${userId})`,
        ),
        integrationName === undefined ? undefined : sql`conversations.integration = ${integrationName}`,
        channel === undefined ? undefined : sql`conversations.channel = ${channel}`,
        afterDate ? sql`${range} > ${afterDate}` : undefined,
        beforeDate ? sql`${range} < ${beforeDate}` : undefined,
        minMessageCount === undefined ? undefined : sql`conversations.message_count >= ${minMessageCount}`,
        maxMessageCount === undefined ? undefined : sql`conversations.message_count <= ${maxMessageCount}`,
      ],
    });
  }

  // Participants

  async addParticipant(actor: BotActor, conversationId: string, userId: string): Promise<User> {
    const { user, signal } = await this.db.transaction().execute(async (trx) => {
      await this.resource.requireRow(actor, conversationId, trx);
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
    await this.resource.requireRow(actor, conversationId);
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
      await this.resource.requireRow(actor, conversationId, trx);
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
    await this.resource.requireRow(actor, conversationId);
    return this.users.list(actor, {
      ...request,
      conversationId,
      sortField: 'createdAt',
      sortDirection: 'asc',
    });
  }

  /** The row of a conversation of this bot, or 404. */
  requireRow(actor: BotActor, conversationId: string, db: Executor = this.db): Promise<Row<'conversations'>> {
    return this.resource.requireRow(actor, conversationId, db);
  }
}
