import { sql } from 'kysely';
import type { RawBuilder, Transaction } from 'kysely';
import type { Executor, Store } from '../../store/index.ts';
import { prepare } from '../../store/prepared.ts';
import type { Database, Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import { notFound } from './errors.ts';
import { fromJson } from './json.ts';
import { withKeyLock } from './locks.ts';
import { Keyset, pageSizeOf } from './pagination.ts';
import type { Page, PageRequest, SortDirection } from './pagination.ts';
import {
  deleteTags,
  hasAllTags,
  loadTags,
  tagPairsColumn,
  tagsFromPairs,
  updateTags,
  withTags,
} from './tags.ts';
import type { TagChanges, Tags } from './tags.ts';
import type { StateType } from '../../value-sets.ts';

/** The tables of records that belong to one bot and carry tags. */
export type TaggedTable = 'users' | 'conversations' | 'messages' | 'workflows';

/** A row of a tagged table, with the columns every such table has. */
export type TaggedRow<T extends TaggedTable> = Row<T> & {
  id: string;
  bot_id: string;
  created_at: string;
  updated_at: string;
};

/** A row with its tags as a JSON array of `[key, value]` pairs. */
export type RowWithTags<T extends TaggedTable> = TaggedRow<T> & { tag_pairs: string };

export interface TaggedResourceSpec<T extends TaggedTable, Item> {
  table: T;
  /** Its name in errors: `Conversation "x" doesn't exist`. */
  name: string;
  /** The type of the states that hang off a record and go with it. */
  states?: Extract<StateType, 'conversation' | 'user' | 'workflow'>;
  /** Every column of the table (`everyKey`): what `withTagsJson` names, where the store must. */
  columns: readonly (keyof Row<T> & string)[];
  toItem(row: Row<T>, tags: Tags): Item;
}

/** A list's filters beyond the bot and its tags, and its order. */
export interface ListOptions<T extends TaggedTable> {
  sort?: Extract<keyof Row<T>, 'created_at' | 'updated_at'>;
  direction?: SortDirection;
  tags?: Tags;
  /** Further conditions (`undefined` ones are skipped). */
  where?: (RawBuilder<unknown> | undefined)[];
}

/**
 * What the records of a bot that carry tags (users, conversations, messages, workflows, and the
 * Files and Tables resources to come) have in common: read one of the bot's records or 404, read it
 * with its tags, find one by tags, get-or-create under a lock, list a keyset page filtered by tags,
 * update its tags, delete it with its tags and states. Each resource keeps only what is its own.
 */
export class TaggedResource<T extends TaggedTable, Item> {
  /** A record with its tags (as a JSON array of `[key, value]` pairs): on the hot path of every turn. */
  private readonly getWithTags;
  private readonly pairs: RawBuilder<string>;

  constructor(
    private readonly store: Store,
    private readonly spec: TaggedResourceSpec<T, Item>,
  ) {
    this.pairs = tagPairsColumn(store.sql, sql.ref('r.id'));
    this.getWithTags = prepare(['id', 'botId'], (_db, { id, botId }: { id: string; botId: string }) =>
      this.withTagsQuery(id, botId),
    );
  }

  /** The query of `get`: a record of the bot with its tags, for a caller that reads it with others. */
  withTagsQuery(id: string, botId: string): RawBuilder<RowWithTags<T>> {
    return sql<RowWithTags<T>>`select r.*, ${this.pairs} as tag_pairs
      from ${sql.table(this.spec.table)} r where r.id = ${id} and r.bot_id = ${botId}`;
  }

  /**
   * `withTagsQuery` as a value for a caller that reads the record with others in one statement: its row
   * as JSON text, or null where the bot has no such record (`itemOfJson` reads it).
   */
  withTagsJson(id: string, botId: string): RawBuilder<string | null> {
    const json = this.store.sql.rowJson('r', [...this.spec.columns, 'tag_pairs']);
    return sql<string | null>`(select ${json} from (${this.withTagsQuery(id, botId)}) r)`;
  }

  /** The item of a row `withTagsQuery` read. */
  itemOf(row: RowWithTags<T>): Item {
    return this.spec.toItem(row, tagsFromPairs(row.tag_pairs));
  }

  /** The item of the JSON `withTagsJson` read, or none. */
  itemOfJson(json: string | null): Item | undefined {
    return json === null ? undefined : this.itemOf(fromJson<RowWithTags<T>>(json));
  }

  /**
   * The row of a record of this bot that `trx` is about to rewrite, held until it ends: an update made
   * meanwhile by another (a sweeper, another replica) is waited for and read, never overwritten.
   */
  heldRow(actor: BotActor, id: string, trx: Transaction<Database>): Promise<TaggedRow<T>> {
    return this.rowOf(actor, id, trx, this.store.sql.heldRows);
  }

  /** The row of a record of this bot; another bot's record does not exist for it. */
  requireRow(actor: BotActor, id: string, db: Executor = this.store.db): Promise<TaggedRow<T>> {
    return this.rowOf(actor, id, db, sql``);
  }

  private async rowOf(
    actor: BotActor,
    id: string,
    db: Executor,
    ending: RawBuilder<unknown>,
  ): Promise<TaggedRow<T>> {
    const { rows } = await sql<TaggedRow<T>>`select * from ${sql.table(this.spec.table)}
      where id = ${id} and bot_id = ${actor.botId} ${ending}`.execute(db);
    const row = rows[0];
    if (!row) throw notFound(this.spec.name, id);
    return row;
  }

  /** A record with its tags, read in one statement (the tags as a JSON array of `[key, value]` pairs). */
  async get(actor: BotActor, id: string, db: Executor = this.store.db): Promise<Item> {
    const { rows } = await this.getWithTags.execute(db, { id, botId: actor.botId });
    const row = rows[0];
    if (!row) throw notFound(this.spec.name, id);
    return this.itemOf(row);
  }

  async withTags(row: TaggedRow<T>, db: Executor = this.store.db): Promise<Item> {
    return this.spec.toItem(row, (await loadTags(db, [row.id])).get(row.id) ?? {});
  }

  /** A row just written, with the tags after `changes`. */
  async withUpdatedTags(row: TaggedRow<T>, changes: TagChanges, db: Executor): Promise<Item> {
    return this.spec.toItem(row, await updateTags(db, row.id, changes));
  }

  /** The oldest record of the bot that carries all these tags and meets `where`. */
  async findByTags(
    db: Executor,
    botId: string,
    tags: Tags,
    where: RawBuilder<unknown>[] = [],
  ): Promise<TaggedRow<T> | undefined> {
    const table = this.spec.table;
    const conditions = [sql`bot_id = ${botId}`, ...where];
    const tagged = hasAllTags(`${table}.id`, tags);
    if (tagged) conditions.push(tagged);
    const { rows } = await sql<TaggedRow<T>>`select * from ${sql.table(table)}
      where ${sql.join(conditions, sql` and `)} order by created_at, id limit 1`.execute(db);
    return rows[0];
  }

  /**
   * Get-or-create: under a lock of `key` (so racing callers create one record), the record that
   * carries `tags` and meets `where`, or else the one `create` makes. Without tags to match on, it
   * creates, unless `always` says `where` alone identifies the record. `db`: a transaction to run in
   * (the lock is then held until it ends).
   */
  async getOrCreate(
    actor: BotActor,
    key: string,
    match: { tags: Tags; where?: RawBuilder<unknown>[]; always?: boolean },
    create: (trx: Transaction<Database>) => Promise<Item>,
    db?: Transaction<Database>,
  ): Promise<{ item: Item; created: boolean }> {
    return withKeyLock(this.store, `${this.spec.table}:${actor.botId}:${key}`, db, async (trx) => {
      const existing =
        match.always || Object.keys(match.tags).length > 0
          ? await this.findByTags(trx, actor.botId, match.tags, match.where)
          : undefined;
      if (existing) return { item: await this.withTags(existing, trx), created: false };
      return { item: await create(trx), created: true };
    });
  }

  /** A keyset page of the bot's records, newest first unless told otherwise, each with its tags. */
  async list(actor: BotActor, request: PageRequest, options: ListOptions<T> = {}): Promise<Page<Item>> {
    const table = this.spec.table;
    const pageSize = pageSizeOf(request);
    const column = `${table}.${options.sort ?? 'created_at'}`;
    const keyset = new Keyset(column, options.direction ?? 'desc', `${table}.id`);
    const cursor = keyset.decode(request.nextToken);
    const conditions = [
      sql`${sql.ref(`${table}.bot_id`)} = ${actor.botId}`,
      hasAllTags(`${table}.id`, options.tags ?? {}),
      ...(options.where ?? []),
      cursor && keyset.after(cursor),
    ].flatMap((c) => (c ? [c] : []));
    const order = sql.raw(keyset.direction);
    const { rows } = await sql<TaggedRow<T>>`select * from ${sql.table(table)}
      where ${sql.join(conditions, sql` and `)}
      order by ${sql.ref(column)} ${order}, ${sql.ref(`${table}.id`)} ${order}
      limit ${pageSize + 1}`.execute(this.store.db);
    const sortKey = options.sort ?? 'created_at';
    const page = keyset.page(rows, pageSize, (row) => [
      sortKey === 'updated_at' ? row.updated_at : row.created_at,
      row.id,
    ]);
    return withTags(this.store.db, page, (row, tags) => this.spec.toItem(row, tags));
  }

  /**
   * Deletes a record of the bot with its tags and states, in one transaction; `before` removes
   * what else goes with it (in the same transaction, before the record).
   */
  async delete(
    actor: BotActor,
    id: string,
    before?: (trx: Transaction<Database>, row: TaggedRow<T>) => Promise<void>,
  ): Promise<TaggedRow<T>> {
    return this.store.db.transaction().execute(async (trx) => {
      const row = await this.requireRow(actor, id, trx);
      await before?.(trx, row);
      await deleteTags(trx, [id]);
      if (this.spec.states) {
        await trx
          .deleteFrom('states')
          .where('bot_id', '=', actor.botId)
          .where('type', '=', this.spec.states)
          .where('resource_id', '=', id)
          .execute();
      }
      await sql`delete from ${sql.table(this.spec.table)} where id = ${id}`.execute(trx);
      return row;
    });
  }
}
