import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import type { SearchEngine, SearchHit, SearchRequest, Store } from '../../store/index.ts';
import type { Row } from '../../store/schema.ts';
import type { BotActor } from '../workspace/actors.ts';
import { fromJson } from '../shared/json.ts';
import { loadTags } from '../shared/tags.ts';
import { visibleFiles } from './access.ts';
import { HEADING_TYPES } from './passages.ts';
import type { PassageStore } from './passages.ts';
import type { ContextItem, SearchPassage, TagFilter } from './schemas.ts';
import { tagFilterConditions } from './tag-filter.ts';
import type { EmbeddingQueue, SemanticSearch } from '../embeddings/queue.ts';
import { closestToQuery, rankedBy, reportingTo, warningsOf } from '../embeddings/ranking.ts';
import type { SearchFallback } from '../embeddings/ranking.ts';
import { SEARCH_LIMIT_DEFAULT, CONTEXT_DEPTH_DEFAULT } from './schemas.ts';

export interface SearchFilesQuery {
  query: string;
  tags?: TagFilter;
  /** Neighbouring passages (each side) added to a hit's content. */
  contextDepth?: number;
  limit?: number;
  /** One passage per file: its hits in document order, under their headings. */
  consolidate?: boolean;
  /** The headings above a hit, before its content. */
  includeBreadcrumb?: boolean;
  /** The neighbours as a `context` list as well. */
  withContext?: boolean;
  /** Passages that say something only, no headings: what answers a question by itself. */
  answersOnly?: boolean;
}

type PassageRow = Row<'file_passages'>;
type Hit = { passage: PassageRow; score: number };

/**
 * searchFiles: the search engine ranks the passages of the files the caller sees (indexed, and
 * matching the tag filter), then each hit is dressed with its file, neighbours and headings.
 */
export class FileSearch {
  private readonly embedding: EmbeddingQueue;

  constructor(
    private readonly store: Store,
    private readonly engine: SearchEngine,
    private readonly passages: PassageStore,
    private readonly semantic: SemanticSearch,
  ) {
    this.embedding = semantic.embedding;
  }

  /**
   * The passages the search may answer, ranked: by their words; with an embedding model, by their words
   * and their meaning together (their scores combined: ranking.ts's `fused`), once the passages have vectors (or by one of
   * them alone, as PARLEY_SEARCH_RANKING says).
   */
  private async ranked(
    actor: BotActor,
    q: SearchFilesQuery,
    among: Pick<SearchRequest, 'scopes' | 'candidate'>,
    wanted: number,
    fallbacks: SearchFallback[],
  ): Promise<SearchHit[]> {
    const { model } = this.embedding.embedder;
    const byWords = (limit: number) => this.engine.search(this.store.db, { query: q.query, ...among, limit });
    // A query of no word has no meaning to rank by either.
    const how = model === undefined || !/[\p{L}\p{N}]/u.test(q.query) ? 'words' : this.semantic.ranking;
    const onFallback = reportingTo(this.semantic.onFallback, fallbacks);
    return rankedBy(how, byWords, () => this.byMeaning(actor, q, among.scopes, onFallback), {
      limit: wanted,
      depth: FUSED_DEPTH,
    });
  }

  /**
   * The passages of these files closest to the query's meaning, among the candidates the store's vector
   * index gives (store/dialects/vector-index.ts) ranked by exact cosine similarity, with their vectors of
   * the model they are ranked with (the configured one, or the older one while they are embedded
   * again): none when they have none yet (the query is then not embedded at all), or when the query
   * cannot be embedded (the provider is down or slow: `onFallback` is told).
   */
  private async byMeaning(
    actor: BotActor,
    q: SearchFilesQuery,
    fileIds: string[],
    onFallback: (fallback: SearchFallback) => void,
  ): Promise<SearchHit[]> {
    const model = await this.embedding.searchModel('file', fileIds);
    if (model === undefined) return [];
    const { vectorIndex } = this.store.sql;
    return closestToQuery(
      this.embedding.embedder,
      { actor, query: q.query, model, depth: FUSED_DEPTH },
      ({ signature, limit }) =>
        vectorIndex.candidates(this.store.db, {
          source: 'passages',
          botId: actor.botId,
          fileIds,
          excludedTypes: q.answersOnly ? HEADING_TYPES : [],
          model,
          signature,
          limit,
        }),
      onFallback,
    );
  }

  /** searchFiles' answer: the passages, and `warnings` when they were ranked by words alone. */
  async search(
    actor: BotActor,
    q: SearchFilesQuery,
  ): Promise<{ passages: SearchPassage[]; warnings?: string[] }> {
    const fallbacks: SearchFallback[] = [];
    const passages = await this.passagesFound(actor, q, fallbacks);
    return { passages, ...warningsOf(fallbacks) };
  }

  private async passagesFound(
    actor: BotActor,
    q: SearchFilesQuery,
    fallbacks: SearchFallback[],
  ): Promise<SearchPassage[]> {
    const limit = q.limit ?? SEARCH_LIMIT_DEFAULT;
    const conditions = [
      visibleFiles(actor),
      sql`files.status = 'indexing_completed'`,
      ...tagFilterConditions(q.tags, 'files.id'),
    ];
    // The files searched first (few, by the bot's index and tags): the scopes of the entries the engine
    // may answer, each checked on the entry it matched. Headings are left out by their passages' types,
    // looked up by id for each match: only the knowledge card asks that.
    const { rows: fileRows } = await sql<{ id: string }>`select files.id from files
      where ${sql.join(conditions, sql` and `)}`.execute(this.store.db);
    if (fileRows.length === 0) return [];
    const scopes = fileRows.map((r) => r.id);
    const candidate = q.answersOnly
      ? (id: RawBuilder<unknown>) => sql<SqlBool>`not exists (select 1 from file_passages
          where file_passages.id = ${id} and file_passages.type in (${sql.join(HEADING_TYPES)}))`
      : undefined;
    // Consolidated answers group hits by file: more hits are ranked than passages answered.
    const wanted = q.consolidate ? limit * 3 : limit;
    const ranked = await this.ranked(
      actor,
      q,
      { scopes, ...(candidate && { candidate }) },
      wanted,
      fallbacks,
    );
    if (ranked.length === 0) return [];
    const rows = await this.store.db
      .selectFrom('file_passages')
      .selectAll()
      .where(
        'id',
        'in',
        ranked.map((h) => h.id),
      )
      .execute();
    const byId = new Map(rows.map((r) => [r.id, r]));
    const hits = ranked.flatMap((h) => {
      const passage = byId.get(h.id);
      return passage ? [{ passage, score: h.score }] : [];
    });
    // The files and the passages around the hits at once (on a database server, two connections).
    const depth = q.consolidate ? 0 : (q.contextDepth ?? CONTEXT_DEPTH_DEFAULT);
    const [files, neighbours, crumbs] = await Promise.all([
      this.files([...new Set(hits.map((h) => h.passage.file_id))]),
      this.passages.around(
        depth > 0
          ? hits.map(({ passage: p }) => ({
              fileId: p.file_id,
              from: p.position - depth,
              to: p.position + depth,
            }))
          : [],
      ),
      // A consolidated answer puts each hit under its headings.
      this.passages.breadcrumbs(
        q.includeBreadcrumb || q.consolidate
          ? hits.map(({ passage: p }) => ({ fileId: p.file_id, position: p.position }))
          : [],
      ),
    ]);
    const crumbsOf = (i: number) => crumbs[i] ?? [];
    if (q.consolidate) return this.consolidated(hits, crumbsOf, files, limit);
    return hits.map((hit, i) => {
      const { file_id: fileId, position } = hit.passage;
      const around = neighbours.filter(
        (n) => n.file_id === fileId && n.position >= position - depth && n.position <= position + depth,
      );
      return this.dressed(hit, files, depth > 0 ? around : [hit.passage], crumbsOf(i), q);
    });
  }

  private dressed(
    { passage, score }: Hit,
    files: Map<string, SearchPassage['file']>,
    around: PassageRow[],
    crumbs: PassageRow[],
    q: SearchFilesQuery,
  ): SearchPassage {
    const content = [
      ...(crumbs.length ? [crumbs.map((c) => plain(c.content)).join(' > ')] : []),
      ...around.map((p) => p.content),
    ].join('\n\n');
    const result: SearchPassage = {
      content,
      score,
      meta: metaOf(passage),
      file: files.get(passage.file_id) as SearchPassage['file'],
    };
    if (q.withContext) {
      const context: ContextItem[] = crumbs.map((c) => ({ text: c.content, type: 'breadcrumb' }));
      for (const p of around) {
        const offset = p.position - passage.position;
        context.push({
          id: p.id,
          text: p.content,
          offset,
          type: offset < 0 ? 'preceding' : offset > 0 ? 'subsequent' : 'current',
        });
      }
      result.context = context;
    }
    return result;
  }

  /** One passage per file: its hits in document order, each under the headings not given yet. */
  private consolidated(
    hits: Hit[],
    crumbsOf: (hit: number) => PassageRow[],
    files: Map<string, SearchPassage['file']>,
    limit: number,
  ): SearchPassage[] {
    const byFile = new Map<string, (Hit & { crumbs: PassageRow[] })[]>();
    hits.forEach((hit, i) =>
      byFile.set(hit.passage.file_id, [
        ...(byFile.get(hit.passage.file_id) ?? []),
        { ...hit, crumbs: crumbsOf(i) },
      ]),
    );
    const answers: SearchPassage[] = [];
    for (const [fileId, fileHits] of [...byFile].slice(0, limit)) {
      const ordered = [...fileHits].sort((a, b) => a.passage.position - b.passage.position);
      const given = new Set<string>();
      const parts: string[] = [];
      for (const { passage, crumbs } of ordered) {
        for (const crumb of crumbs) {
          if (!given.has(crumb.id)) parts.push(crumb.content);
          given.add(crumb.id);
        }
        if (!given.has(passage.id)) parts.push(passage.content);
        given.add(passage.id);
      }
      answers.push({
        content: parts.join('\n\n'),
        score: Math.max(...fileHits.map((h) => h.score)),
        meta: { type: 'consolidated' },
        file: files.get(fileId) as SearchPassage['file'],
      });
    }
    return answers;
  }

  private async files(ids: string[]): Promise<Map<string, SearchPassage['file']>> {
    const [rows, tags] = await Promise.all([
      this.store.db.selectFrom('files').selectAll().where('id', 'in', ids).execute(),
      loadTags(this.store.db, ids),
    ]);
    return new Map(
      rows.map((r) => [
        r.id,
        {
          id: r.id,
          key: r.key,
          contentType: r.content_type,
          metadata: fromJson(r.metadata),
          tags: tags.get(r.id) ?? {},
          createdAt: r.created_at,
          updatedAt: r.updated_at,
        },
      ]),
    );
  }
}

/** How many hits of each ranking are fused: a passage below this in both is not answered. */
const FUSED_DEPTH = 100;

function metaOf(passage: PassageRow): SearchPassage['meta'] {
  return {
    type: 'chunk',
    subtype: passage.type,
    position: passage.position,
    ...(passage.page_number !== null && { pageNumber: passage.page_number }),
  };
}

/** A heading's text without its Markdown marks (`## Returns` -> `Returns`). */
function plain(markdown: string): string {
  return markdown.replace(/^#+\s*/, '').trim();
}
