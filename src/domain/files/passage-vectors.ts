import { sql } from 'kysely';
import type { Executor } from '../../store/index.ts';
import type { EmbeddingSource, EmbeddingText, StoredVector } from '../embeddings/queue.ts';
import { contentHash } from '../embeddings/vectors.ts';
import { searchEntries } from './passages.ts';

/**
 * Files' passages as the embedding queue sees them: a passage is embedded as the search index holds it
 * (under its headings), its vector kept in `passage_vectors` (removed with it by the foreign key).
 */
export const passageVectors: EmbeddingSource = {
  async missing(db, fileId, model, limit): Promise<EmbeddingText[]> {
    const passages = await db
      .selectFrom('file_passages')
      .select(['id', 'type', 'content'])
      .where('file_id', '=', fileId)
      .orderBy('position')
      .execute();
    const embedded = await db
      .selectFrom('passage_vectors')
      .select('passage_id')
      .where('file_id', '=', fileId)
      .where('model', '=', model)
      .execute();
    const done = new Set(embedded.map((v) => v.passage_id));
    return searchEntries(passages)
      .filter((entry) => !done.has(entry.id))
      .slice(0, limit)
      .map((entry) => ({ key: entry.id, text: entry.text, hash: contentHash(entry.text) }));
  },

  known: (db, botId, model, hashes): Promise<StoredVector[]> =>
    db
      .selectFrom('passage_vectors')
      .innerJoin('files', 'files.id', 'passage_vectors.file_id')
      .select(['content_hash', 'dimension', 'vector', 'signature'])
      .where('passage_vectors.model', '=', model)
      .where('content_hash', 'in', hashes)
      .where('files.bot_id', '=', botId)
      .execute(),

  async write(trx, fileId, model, vectors): Promise<void> {
    // Passages are never changed, only replaced (new ids): one gone meanwhile takes no vector.
    const alive = new Set(
      (await trx.selectFrom('file_passages').select('id').where('file_id', '=', fileId).execute()).map(
        (p) => p.id,
      ),
    );
    const rows = vectors
      .filter((v) => alive.has(v.key))
      .map(({ key, ...v }) => ({ ...v, passage_id: key, file_id: fileId, model }));
    for (let at = 0; at < rows.length; at += 200) {
      await trx
        .insertInto('passage_vectors')
        .values(rows.slice(at, at + 200))
        .onConflict((oc) => oc.columns(['passage_id', 'model']).doNothing())
        .execute();
    }
  },

  async stale(db, model) {
    const { rows } = await sql<{ id: string; bot_id: string }>`select f.id, f.bot_id from files f
      where f.status = 'indexing_completed'
        and (exists (select 1 from passage_vectors v where v.file_id = f.id and v.model <> ${model})
          or exists (select 1 from file_passages p where p.file_id = f.id and not exists (
            select 1 from passage_vectors v where v.passage_id = p.id and v.model = ${model})))`.execute(db);
    return rows.map((r) => ({ id: r.id, botId: r.bot_id }));
  },

  otherModel: (db, fileIds, model) => mostCommonOther(db, fileIds, model),

  anyVector: (db, fileIds, model) =>
    db
      .selectFrom('passage_vectors')
      .select('passage_id')
      .where('file_id', 'in', fileIds)
      .where('model', '=', model)
      .limit(1),

  async dropOthers(db, botId, model): Promise<void> {
    await db
      .deleteFrom('passage_vectors')
      .where('model', '<>', model)
      .where('file_id', 'in', (eb) => eb.selectFrom('files').select('id').where('bot_id', '=', botId))
      .execute();
  },
};

async function mostCommonOther(db: Executor, fileIds: string[], model: string): Promise<string | undefined> {
  const row = await db
    .selectFrom('passage_vectors')
    .select(['model', (eb) => eb.fn.countAll<number>().as('n')])
    .where('file_id', 'in', fileIds)
    .where('model', '<>', model)
    .groupBy('model')
    .orderBy('n', 'desc')
    .orderBy('model')
    .executeTakeFirst();
  return row?.model;
}
