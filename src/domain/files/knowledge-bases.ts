import { sql } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import type { Files } from './files.ts';
import { notFound } from '../shared/errors.ts';
import { newId } from '../shared/ids.ts';
import { Keyset, pageSizeOf } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { deleteTags, loadTags, updateTags, withTags } from '../shared/tags.ts';
import type { TagChanges, Tags } from '../shared/tags.ts';
import { nowIso } from '../shared/time.ts';
import type { KnowledgeBase, KnowledgeBaseListItem, TagFilter } from './schemas.ts';
import { tagFilterConditions } from './tag-filter.ts';

/**
 * Knowledge bases: named, tagged groupings of a bot's files. A file joins one by the convention tags
 * `source: knowledge-base` and `kbId: <id>`; searching a knowledge base is searchFiles with `tags.kbId`.
 */
export const KB_TAGS = {
  source: 'source',
  sourceValue: 'knowledge-base',
  kbId: 'kbId',
  title: 'title',
} as const;

const toKnowledgeBase = (row: Row<'knowledge_bases'>, tags: Tags): KnowledgeBaseListItem => ({
  id: row.id,
  name: row.name,
  createdAt: row.created_at,
  tags,
});

export class KnowledgeBases {
  constructor(
    private readonly store: Store,
    private readonly files: Files,
  ) {}

  async create(actor: BotActor, body: { name: string; tags?: Tags | undefined }): Promise<KnowledgeBase> {
    const now = nowIso();
    const row = {
      id: newId('knowledgeBase'),
      bot_id: actor.botId,
      name: body.name,
      created_at: now,
      updated_at: now,
    };
    const tags = await this.store.db.transaction().execute(async (trx) => {
      await trx.insertInto('knowledge_bases').values(row).execute();
      return updateTags(trx, row.id, body.tags ?? {});
    });
    return { id: row.id, name: row.name, tags };
  }

  async update(
    actor: BotActor,
    id: string,
    body: { name: string; tags?: TagChanges | undefined },
  ): Promise<KnowledgeBase> {
    return this.store.db.transaction().execute(async (trx) => {
      const result = await trx
        .updateTable('knowledge_bases')
        .set({ name: body.name, updated_at: nowIso() })
        .where('id', '=', id)
        .where('bot_id', '=', actor.botId)
        .executeTakeFirst();
      if (Number(result.numUpdatedRows) === 0) throw notFound('Knowledge base', id);
      const tags = await updateTags(trx, id, body.tags ?? {});
      return { id, name: body.name, tags };
    });
  }

  /**
   * Deletes a knowledge base and the files that make it (the caller's own, tagged with its id), with
   * their passages and vectors, in one transaction: nothing of it is searched any more.
   */
  async delete(actor: BotActor, id: string): Promise<void> {
    const freed = await this.store.db.transaction().execute(async (trx) => {
      const result = await trx
        .deleteFrom('knowledge_bases')
        .where('id', '=', id)
        .where('bot_id', '=', actor.botId)
        .executeTakeFirst();
      if (Number(result.numDeletedRows) === 0) throw notFound('Knowledge base', id);
      await deleteTags(trx, [id]);
      return this.files.removeTagged(trx, actor, KnowledgeBases.fileTags(id));
    });
    await this.files.freeBlobs(freed);
  }

  async list(
    actor: BotActor,
    query: PageRequest & { tags?: TagFilter },
  ): Promise<Page<KnowledgeBaseListItem>> {
    const pageSize = pageSizeOf(query);
    const keyset = new Keyset('knowledge_bases.created_at', 'desc', 'knowledge_bases.id');
    const cursor = keyset.decode(query.nextToken);
    const conditions = [
      sql`knowledge_bases.bot_id = ${actor.botId}`,
      ...tagFilterConditions(query.tags, 'knowledge_bases.id'),
      ...(cursor ? [keyset.after(cursor)] : []),
    ];
    const { rows } = await sql<Row<'knowledge_bases'>>`select * from knowledge_bases
      where ${sql.join(conditions, sql` and `)}
      order by knowledge_bases.created_at desc, knowledge_bases.id desc limit ${pageSize + 1}`.execute(
      this.store.db,
    );
    return withTags(
      this.store.db,
      keyset.page(rows, pageSize, (r) => [r.created_at, r.id]),
      toKnowledgeBase,
    );
  }

  /** A knowledge base of the bot by id, or else by name (the oldest of that name). */
  async find(actor: BotActor, idOrName: string): Promise<KnowledgeBase | undefined> {
    const row = await this.store.db
      .selectFrom('knowledge_bases')
      .selectAll()
      .where('bot_id', '=', actor.botId)
      .where((eb) => eb.or([eb('id', '=', idOrName), eb('name', '=', idOrName)]))
      .orderBy(sql`case when id = ${idOrName} then 0 else 1 end`)
      .orderBy('created_at')
      .limit(1)
      .executeTakeFirst();
    if (!row) return undefined;
    const tags = (await loadTags(this.store.db, [row.id])).get(row.id) ?? {};
    return { id: row.id, name: row.name, tags };
  }

  /** Tags a bot's knowledge-base file carries (so searchFiles with `tags.kbId` finds it). */
  static fileTags(kbId: string, title?: string): Tags {
    return {
      [KB_TAGS.source]: KB_TAGS.sourceValue,
      [KB_TAGS.kbId]: kbId,
      ...(title !== undefined && { [KB_TAGS.title]: title }),
    };
  }
}
