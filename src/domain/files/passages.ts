import { sql } from 'kysely';
import type { SqlBool } from 'kysely';
import type { Executor, SearchEngine, Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import { newId } from '../shared/ids.ts';
import type { Page } from '../shared/pagination.ts';
import { valuePage, valueToken } from '../shared/pagination.ts';
import type { Passage } from './schemas.ts';
import type { PassageType } from '../../value-sets.ts';
import { contentHash } from '../embeddings/vectors.ts';

/** What a file's passages are to be embedded with, and when (the embedding job's queue, `embedding.ts`). */
export interface EmbeddingJobs {
  /** Queues the embedding of a file's passages, in the transaction that wrote them (none without a model). */
  queue(trx: Executor, fileId: string): Promise<void>;
}

/** A passage as parsing or setFilePassages gives it, before it is stored. */
export interface PassageDraft {
  type: PassageType;
  content: string;
  pageNumber?: number;
}

export function toPassage(row: Row<'file_passages'>): Passage {
  return {
    id: row.id,
    content: row.content,
    meta: {
      type: 'chunk',
      subtype: row.type,
      position: row.position,
      ...(row.page_number !== null && { pageNumber: row.page_number }),
    },
  };
}

/** Headings: passages that name a section rather than say something. */
export const HEADING_TYPES: readonly PassageType[] = ['title', 'subtitle'];

/**
 * What the search index holds of each passage: a heading as it is, any other passage under the headings
 * of its section, so that a question naming the section finds what the section says, not only its title.
 */
export function searchEntries(rows: { id: string; type: PassageType; content: string }[]) {
  let title = '';
  let subtitle = '';
  return rows.map((r) => {
    if (r.type === 'title') [title, subtitle] = [r.content, ''];
    if (r.type === 'subtitle') subtitle = r.content;
    if (HEADING_TYPES.includes(r.type)) return { id: r.id, text: r.content };
    return { id: r.id, text: [title, subtitle, r.content].filter(Boolean).join('\n') };
  });
}

/**
 * A file's passages in document order, their entries in the search index and their vectors, always
 * written together.
 */
export class PassageStore {
  constructor(
    private readonly store: Store,
    private readonly engine: SearchEngine,
    private readonly embedding: EmbeddingJobs,
  ) {}

  /**
   * Replaces a file's passages (in the caller's transaction). The vectors of texts that `vectorsOf` (this
   * file, or the one it is copied from) had embedded already are kept for the passages of the same text,
   * and the rest are queued for embedding.
   */
  async replace(trx: Executor, fileId: string, drafts: PassageDraft[], vectorsOf = fileId): Promise<void> {
    const known = await this.vectorsByText(trx, vectorsOf);
    await this.drop(trx, [fileId]);
    const rows = drafts.map((d, position) => ({
      id: newId('filePassage'),
      file_id: fileId,
      position,
      type: d.type,
      page_number: d.pageNumber ?? null,
      content: d.content,
    }));
    for (let i = 0; i < rows.length; i += 200) {
      await trx
        .insertInto('file_passages')
        .values(rows.slice(i, i + 200))
        .execute();
    }
    const entries = searchEntries(rows);
    await this.engine.put(
      trx,
      entries.map((entry) => ({ ...entry, scope: fileId })),
    );
    const kept = entries.flatMap((entry) => {
      const hash = contentHash(entry.text);
      return (known.get(hash) ?? []).map((v) => ({ ...v, passage_id: entry.id, file_id: fileId }));
    });
    for (let i = 0; i < kept.length; i += 200) {
      await trx
        .insertInto('passage_vectors')
        .values(kept.slice(i, i + 200))
        .execute();
    }
    if (rows.length > 0) await this.embedding.queue(trx, fileId);
  }

  /** A file's vectors by the hash of the text embedded (one per model). */
  private async vectorsByText(trx: Executor, fileId: string) {
    const rows = await trx
      .selectFrom('passage_vectors')
      .select(['content_hash', 'model', 'dimension', 'vector', 'signature'])
      .where('file_id', '=', fileId)
      .execute();
    const byText = new Map<string, typeof rows>();
    for (const row of rows) {
      const same = byText.get(row.content_hash) ?? [];
      if (!same.some((v) => v.model === row.model)) byText.set(row.content_hash, [...same, row]);
    }
    return byText;
  }

  /** Copies a file's passages to another file (whose own are dropped). */
  async copy(trx: Executor, fromFileId: string, toFileId: string): Promise<void> {
    const rows = await trx
      .selectFrom('file_passages')
      .selectAll()
      .where('file_id', '=', fromFileId)
      .orderBy('position')
      .execute();
    await this.replace(
      trx,
      toFileId,
      rows.map((r) => ({
        type: r.type,
        content: r.content,
        ...(r.page_number !== null && { pageNumber: r.page_number }),
      })),
      fromFileId,
    );
  }

  /** Removes the passages of these files, and their search entries (their vectors go with them). */
  async drop(trx: Executor, fileIds: string[]): Promise<void> {
    if (fileIds.length === 0) return;
    const ids = await trx.selectFrom('file_passages').select('id').where('file_id', 'in', fileIds).execute();
    await this.engine.remove(
      trx,
      ids.map((r) => r.id),
    );
    await trx.deleteFrom('file_passages').where('file_id', 'in', fileIds).execute();
  }

  /** A page of a file's passages, in order (the token is the last position served). */
  async page(fileId: string, pageSize: number, nextToken: string | undefined): Promise<Page<Passage>> {
    const after = valueToken.decode(nextToken);
    const position = after === undefined ? -1 : Number(after);
    const rows = await this.store.db
      .selectFrom('file_passages')
      .selectAll()
      .where('file_id', '=', fileId)
      .where('position', '>', Number.isInteger(position) ? position : -1)
      .orderBy('position')
      .limit(pageSize + 1)
      .execute();
    const page = valuePage(rows, pageSize, (r) => String(r.position));
    return { ...page, items: page.items.map(toPassage) };
  }

  /** The passages around several positions at once (one query): by file, in order. */
  async around(spots: { fileId: string; from: number; to: number }[]): Promise<Row<'file_passages'>[]> {
    if (spots.length === 0) return [];
    const ranges = spots.map(
      (s) => sql<SqlBool>`(file_id = ${s.fileId} and position between ${s.from} and ${s.to})`,
    );
    const { rows } = await sql<Row<'file_passages'>>`select * from file_passages
      where ${sql.join(ranges, sql` or `)} order by file_id, position`.execute(this.store.db);
    return rows;
  }

  /**
   * The headings above each spot, in one statement: for each, the last title above it, then the
   * nearest subtitle after that title (looked for among the 20 headings nearest above it).
   */
  async breadcrumbs(spots: { fileId: string; position: number }[]): Promise<Row<'file_passages'>[][]> {
    if (spots.length === 0) return [];
    const above = spots.map(
      ({ fileId, position }, i) => sql`select * from (select ${sql.lit(i)} as spot, p.* from file_passages p
        where p.file_id = ${fileId} and p.position < ${position} and p.type in ('title', 'subtitle')
        order by p.position desc limit 20) ${sql.id(`above_${i}`)}`,
    );
    const { rows } = await sql<Row<'file_passages'> & { spot: number }>`${sql.join(
      above,
      sql` union all `,
    )}`.execute(this.store.db);
    return spots.map((_, i) => {
      const nearestFirst = rows
        .filter((row) => Number(row.spot) === i)
        .sort((a, b) => b.position - a.position);
      const chain: Row<'file_passages'>[] = [];
      for (const { spot: _spot, ...row } of nearestFirst) {
        // Walking up: one subtitle (the nearest), then the title that heads them.
        if (row.type === 'title') {
          chain.unshift(row);
          break;
        }
        if (chain.length === 0) chain.unshift(row);
      }
      return chain;
    });
  }
}
