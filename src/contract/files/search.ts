import { Type } from 'typebox';
import {
  SearchPassageSchema,
  CONTEXT_DEPTH_DEFAULT,
  CONTEXT_DEPTH_MAX,
  QUERY_MAX_LENGTH,
  SEARCH_LIMIT_DEFAULT,
  SEARCH_LIMIT_MAX,
  TagFilterSchema,
} from '../../domain/files/schemas.ts';
import { operation } from '../operation.ts';

export const searchOperations = [
  operation({
    id: 'searchFiles',
    method: 'GET',
    path: '/files/search',
    access: 'read',
    tag: 'Files',
    summary: 'Search the passages of the bot’s indexed files',
    description:
      'Full-text search with English stemming, ranked by relevance (BM25 on SQLite, ts_rank_cd on Postgres), fused with the passages’ similarity of meaning to the query when the server has an embedding model (0.9 × the cosine similarity + 0.1 × the BM25 score over the answer’s best, in [0, 1]): higher scores are better, comparable within one answer. A knowledge base is searched with `tags.kbId`.',
    query: {
      query: Type.String({ maxLength: QUERY_MAX_LENGTH }),
      tags: Type.Optional(TagFilterSchema),
      contextDepth: Type.Optional(
        Type.Integer({ minimum: 0, maximum: CONTEXT_DEPTH_MAX, default: CONTEXT_DEPTH_DEFAULT }),
      ),
      limit: Type.Optional(
        Type.Integer({ minimum: 1, maximum: SEARCH_LIMIT_MAX, default: SEARCH_LIMIT_DEFAULT }),
      ),
      consolidate: Type.Optional(Type.Boolean()),
      includeBreadcrumb: Type.Optional(Type.Boolean()),
      withContext: Type.Optional(Type.Boolean()),
    },
    response: Type.Object({
      passages: Type.Array(SearchPassageSchema),
      warnings: Type.Optional(
        Type.Array(Type.String(), {
          description:
            'Parley: present when the passages were ranked otherwise than the server ranks them, e.g. by words alone because the query could not be embedded',
        }),
      ),
    }),
  }),
] as const;
