import { sql } from 'kysely';
import type { Transaction } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import { everyKey } from '../../store/prepared.ts';
import type { Database, Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import { newId } from '../shared/ids.ts';
import { fromJson, mergeMap, toJson, withoutNulls } from '../shared/json.ts';
import type { Page, PageRequest, SortDirection } from '../shared/pagination.ts';
import { TaggedResource } from '../shared/tagged-resource.ts';
import { insertTags, deleteTags, discriminatingTags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import type { User, CreateUserBody, GetOrCreateUserBody, UpdateUserBody } from './schemas.ts';

export interface ListUsersQuery extends PageRequest {
  conversationId?: string;
  tags?: Record<string, string>;
  afterDate?: string;
  beforeDate?: string;
  rangeField?: 'createdAt' | 'updatedAt';
  sortField?: 'createdAt' | 'updatedAt';
  sortDirection?: SortDirection;
}

/** The column a user list sorts or ranges on. */
const COLUMNS = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

function toUser(row: Row<'users'>, tags: Record<string, string>): User {
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    tags,
    ...(row.name !== null && { name: row.name }),
    ...(row.picture_url !== null && { pictureUrl: row.picture_url }),
    properties: fromJson<Record<string, string>>(row.properties),
    attributes: fromJson<Record<string, string>>(row.attributes),
  };
}

/** End users of one bot: whoever talks to it on any channel. */
export class Users {
  /** Its records with their tags (read with others at a turn's start: see turn-records.ts). */
  readonly resource: TaggedResource<'users', User>;

  constructor(private readonly store: Store) {
    this.resource = new TaggedResource(store, {
      table: 'users',
      name: 'User',
      states: 'user',
      columns: everyKey<Row<'users'>>()([
        'id',
        'bot_id',
        'name',
        'picture_url',
        'properties',
        'attributes',
        'created_at',
        'updated_at',
      ]),
      toItem: toUser,
    });
  }

  async create(actor: BotActor, body: CreateUserBody, db: Executor = this.store.db): Promise<User> {
    const now = nowIso();
    const row: Row<'users'> = {
      id: newId('user'),
      bot_id: actor.botId,
      name: body.name ?? null,
      picture_url: body.pictureUrl ?? null,
      properties: toJson(body.properties ?? {}),
      attributes: toJson(body.attributes ?? {}),
      created_at: now,
      updated_at: now,
    };
    await db.insertInto('users').values(row).execute();
    await insertTags(db, row.id, body.tags ?? {});
    return toUser(row, body.tags ?? {});
  }

  get(actor: BotActor, userId: string, db: Executor = this.store.db): Promise<User> {
    return this.resource.get(actor, userId, db);
  }

  /** Whether the user exists in this bot (the bot itself is no user). */
  async exists(actor: BotActor, userId: string, db: Executor = this.store.db): Promise<boolean> {
    const row = await db
      .selectFrom('users')
      .select('id')
      .where('id', '=', userId)
      .where('bot_id', '=', actor.botId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** `trx`: a transaction to run in (the import and initialization of incoming messages). */
  async getOrCreate(
    actor: BotActor,
    body: GetOrCreateUserBody,
    trx?: Transaction<Database>,
  ): Promise<{ user: User; created: boolean }> {
    const tags = withoutNulls(body.tags);
    const discriminating = discriminatingTags(tags, body.discriminateByTags);
    const { item, created } = await this.resource.getOrCreate(
      actor,
      toJson(discriminating),
      { tags: discriminating },
      (t) =>
        this.create(
          actor,
          {
            ...body,
            tags,
            properties: withoutNulls(body.properties),
            attributes: withoutNulls(body.attributes),
          },
          t,
        ),
      trx,
    );
    return { user: item, created };
  }

  async update(actor: BotActor, userId: string, body: UpdateUserBody): Promise<User> {
    return this.store.db.transaction().execute(async (trx) => {
      const row = await this.resource.heldRow(actor, userId, trx);
      const next: Row<'users'> = {
        ...row,
        name: body.name === undefined ? row.name : body.name,
        picture_url: body.pictureUrl === undefined ? row.picture_url : body.pictureUrl,
        properties: toJson(mergeMap(fromJson<Record<string, string>>(row.properties), body.properties)),
        attributes: toJson(mergeMap(fromJson<Record<string, string>>(row.attributes), body.attributes)),
        updated_at: nowIso(),
      };
      await trx.updateTable('users').set(next).where('id', '=', userId).execute();
      return this.resource.withUpdatedTags(next, body.tags ?? {}, trx);
    });
  }

  /** Deletes a user with what it wrote (its messages), its events and states, and its tags. */
  async delete(actor: BotActor, userId: string): Promise<void> {
    await this.resource.delete(actor, userId, async (trx) => {
      // Events before conversations, the order of a turn's end and of a message's statement
      // (event-queue.ts `runningTurnsIn`): the other could make two of them wait for each other.
      await trx
        .deleteFrom('events')
        .where('user_id', '=', userId)
        .where('bot_id', '=', actor.botId)
        .execute();
      const messages = await trx
        .selectFrom('messages')
        .select(['id', 'conversation_id'])
        .where('user_id', '=', userId)
        .where('bot_id', '=', actor.botId)
        .execute();
      const ids = messages.map((m) => m.id);
      for (let i = 0; i < ids.length; i += 500) {
        const chunk = ids.slice(i, i + 500);
        await deleteTags(trx, chunk);
        await trx.deleteFrom('messages').where('id', 'in', chunk).execute();
      }
      const removed = new Map<string, number>();
      for (const m of messages) removed.set(m.conversation_id, (removed.get(m.conversation_id) ?? 0) + 1);
      for (const [conversationId, count] of removed) {
        await trx
          .updateTable('conversations')
          .set((eb) => ({ message_count: eb('message_count', '-', count) }))
          .where('id', '=', conversationId)
          .execute();
      }
      // Participations go with the user (the foreign key cascades).
    });
  }

  list(actor: BotActor, query: ListUsersQuery): Promise<Page<User>> {
    const range = sql.ref(`users.${COLUMNS[query.rangeField ?? 'createdAt']}`);
    const { conversationId, afterDate, beforeDate } = query;
    return this.resource.list(actor, query, {
      sort: COLUMNS[query.sortField ?? 'createdAt'],
      direction: query.sortDirection ?? 'desc',
      tags: query.tags ?? {},
      where: [
        conversationId === undefined
          ? undefined
          : sql`exists (select 1 from participants where participants.user_id = users.id and participants.conversation_id = ${conversationId})`,
        afterDate ? sql`${range} > ${afterDate}` : undefined,
        beforeDate ? sql`${range} < ${beforeDate}` : undefined,
      ],
    });
  }
}
