import { Type } from 'typebox';
import type { Static } from 'typebox';
import type { Executor, Store } from '../store/index.ts';
import type { UsersTable } from '../store/schema.ts';
import type { BotActor } from './actors.ts';
import { notFound } from './errors.ts';
import { newId } from './ids.ts';
import { fromJson, mergeMap, toJson, withoutNulls } from './json.ts';
import { withKeyLock } from './locks.ts';
import { Keyset, pageSizeOf } from './pagination.ts';
import type { Page, PageRequest, SortDirection } from './pagination.ts';
import { TagChangeMap, TagMap, Timestamp } from './schemas.ts';
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

export const UserSchema = Type.Object({
  id: Type.String(),
  createdAt: Timestamp,
  updatedAt: Timestamp,
  tags: TagMap,
  name: Type.Optional(Type.String()),
  pictureUrl: Type.Optional(Type.String()),
  properties: Type.Optional(TagMap),
  attributes: Type.Optional(TagMap),
});
export type User = Static<typeof UserSchema>;

const Name = Type.String({ maxLength: 200 });
const PictureUrl = Type.String({ maxLength: 40000 });

export const CreateUserBodySchema = Type.Object({
  tags: Type.Optional(TagMap),
  integrationName: Type.Optional(Type.String()),
  name: Type.Optional(Name),
  pictureUrl: Type.Optional(PictureUrl),
  properties: Type.Optional(TagMap),
  attributes: Type.Optional(TagMap),
});
export type CreateUserBody = Static<typeof CreateUserBodySchema>;

export const GetOrCreateUserBodySchema = Type.Object({
  tags: Type.Optional(TagChangeMap),
  integrationName: Type.Optional(Type.String()),
  name: Type.Optional(Name),
  pictureUrl: Type.Optional(PictureUrl),
  properties: Type.Optional(TagChangeMap),
  attributes: Type.Optional(TagChangeMap),
  discriminateByTags: Type.Optional(Type.Array(Type.String())),
});
export type GetOrCreateUserBody = Static<typeof GetOrCreateUserBodySchema>;

export const UpdateUserBodySchema = Type.Object({
  tags: Type.Optional(TagChangeMap),
  name: Type.Optional(Type.Union([Name, Type.Null()])),
  pictureUrl: Type.Optional(Type.Union([PictureUrl, Type.Null()])),
  properties: Type.Optional(TagChangeMap),
  attributes: Type.Optional(TagChangeMap),
});
export type UpdateUserBody = Static<typeof UpdateUserBodySchema>;

export interface ListUsersQuery extends PageRequest {
  conversationId?: string;
  tags?: Record<string, string>;
  afterDate?: string;
  beforeDate?: string;
  rangeField?: 'createdAt' | 'updatedAt';
  sortField?: 'createdAt' | 'updatedAt';
  sortDirection?: SortDirection;
}

const COLUMNS = { createdAt: 'users.created_at', updatedAt: 'users.updated_at' } as const;

function toUser(row: UsersTable, tags: Record<string, string>): User {
  const properties = fromJson<Record<string, string>>(row.properties);
  const attributes = fromJson<Record<string, string>>(row.attributes);
  return {
    id: row.id,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    tags,
    ...(row.name !== null && { name: row.name }),
    ...(row.picture_url !== null && { pictureUrl: row.picture_url }),
    properties,
    attributes,
  };
}

/** End users of one bot: whoever talks to it on any channel. */
export class Users {
  constructor(private readonly store: Store) {}

  private get db() {
    return this.store.db;
  }

  async create(actor: BotActor, body: CreateUserBody, db: Executor = this.db): Promise<User> {
    const now = nowIso();
    const row: UsersTable = {
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
    await applyTagChanges(db, row.id, body.tags ?? {});
    return toUser(row, body.tags ?? {});
  }

  async get(actor: BotActor, userId: string, db: Executor = this.db): Promise<User> {
    const row = await this.requireRow(actor, userId, db);
    return toUser(row, (await loadTags(db, [row.id])).get(row.id) ?? {});
  }

  /** Whether the user exists in this bot (the bot itself is no user). */
  async exists(actor: BotActor, userId: string, db: Executor = this.db): Promise<boolean> {
    const row = await db
      .selectFrom('users')
      .select('id')
      .where('id', '=', userId)
      .where('bot_id', '=', actor.botId)
      .executeTakeFirst();
    return row !== undefined;
  }

  async getOrCreate(actor: BotActor, body: GetOrCreateUserBody): Promise<{ user: User; created: boolean }> {
    const tags = withoutNulls(body.tags);
    const discriminating = discriminatingTags(tags, body.discriminateByTags);
    return withKeyLock(this.store, `user:${actor.botId}:${toJson(discriminating)}`, async (trx) => {
      const existing = Object.keys(discriminating).length
        ? await findByTags(trx, 'users', actor.botId, discriminating)
        : undefined;
      if (existing) return { user: await this.get(actor, existing, trx), created: false };
      const user = await this.create(
        actor,
        {
          ...body,
          tags,
          properties: withoutNulls(body.properties),
          attributes: withoutNulls(body.attributes),
        },
        trx,
      );
      return { user, created: true };
    });
  }

  async update(actor: BotActor, userId: string, body: UpdateUserBody): Promise<User> {
    return this.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, userId, trx);
      const next: UsersTable = {
        ...row,
        name: body.name === undefined ? row.name : body.name,
        picture_url: body.pictureUrl === undefined ? row.picture_url : body.pictureUrl,
        properties: toJson(mergeMap(fromJson<Record<string, string>>(row.properties), body.properties)),
        attributes: toJson(mergeMap(fromJson<Record<string, string>>(row.attributes), body.attributes)),
        updated_at: nowIso(),
      };
      await trx.updateTable('users').set(next).where('id', '=', userId).execute();
      return toUser(next, await updateTags(trx, userId, body.tags ?? {}));
    });
  }

  async delete(actor: BotActor, userId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await this.requireRow(actor, userId, trx);
      await deleteTags(trx, [userId]);
      await deleteStatesOf(trx, actor.botId, 'user', userId);
      await trx.deleteFrom('users').where('id', '=', userId).execute();
    });
  }

  async list(actor: BotActor, query: ListUsersQuery): Promise<Page<User>> {
    const pageSize = pageSizeOf(query);
    const sortField = query.sortField ?? 'createdAt';
    const keyset = new Keyset(COLUMNS[sortField], query.sortDirection ?? 'desc', 'users.id');
    const cursor = keyset.decode(query.nextToken);
    const range = COLUMNS[query.rangeField ?? 'createdAt'];
    let select = this.db.selectFrom('users').selectAll('users').where('users.bot_id', '=', actor.botId);
    if (query.conversationId !== undefined) {
      const conversationId = query.conversationId;
      select = select.where(({ exists, selectFrom }) =>
        exists(
          selectFrom('participants')
            .select('participants.user_id')
            .whereRef('participants.user_id', '=', 'users.id')
            .where('participants.conversation_id', '=', conversationId),
        ),
      );
    }
    for (const condition of hasTags('users.id', query.tags ?? {})) select = select.where(condition);
    if (query.afterDate) select = select.where(range, '>', query.afterDate);
    if (query.beforeDate) select = select.where(range, '<', query.beforeDate);
    if (cursor) select = select.where(keyset.after(cursor));
    const rows = await select
      .orderBy(COLUMNS[sortField], keyset.direction)
      .orderBy('users.id', keyset.direction)
      .limit(pageSize + 1)
      .execute();
    return withTags(
      this.db,
      keyset.page(rows, pageSize, (r) => [sortField === 'createdAt' ? r.created_at : r.updated_at, r.id]),
      toUser,
    );
  }

  private async requireRow(actor: BotActor, userId: string, db: Executor): Promise<UsersTable> {
    const row = await db
      .selectFrom('users')
      .selectAll()
      .where('id', '=', userId)
      .where('bot_id', '=', actor.botId)
      .executeTakeFirst();
    if (!row) throw notFound('User', userId);
    return row;
  }
}
