import { Type } from 'typebox';
import type { Static } from 'typebox';
import { JsonObject, Timestamp } from '../shared/schemas.ts';
import { FILE_ACCESS_POLICIES, FILE_STATUSES, PASSAGE_TYPES } from '../../value-sets.ts';

/** The Files API's resources and bodies, as `@botpress/client` 1.45.0 sends and expects them. */

/** Text the stores keep as is: any character but NUL, which Postgres text cannot hold. */
export const NO_NUL = '^[^\\u0000]*$';
export const Text = (options: { minLength?: number; maxLength?: number; description?: string } = {}) =>
  Type.String({ ...options, pattern: NO_NUL });

/** Tag values of files are limited to 1000 characters (the hosted spec). */
const TagValue = Text({ maxLength: 1000 });
const TagKey = Text({ minLength: 1, maxLength: 200 });
export const FileTags = Type.Record(TagKey, TagValue);
export const FileTagChanges = Type.Record(TagKey, Type.Union([TagValue, Type.Null()]));

export const AccessPolicySchema = Type.Enum(FILE_ACCESS_POLICIES);
export const AccessPolicies = Type.Array(AccessPolicySchema, { maxItems: FILE_ACCESS_POLICIES.length });
export const FileStatusSchema = Type.Enum(FILE_STATUSES);

export const FileOwnerSchema = Type.Object({
  type: Type.Enum(['bot', 'integration', 'user']),
  id: Type.Optional(Type.String()),
  name: Type.Optional(Type.String()),
  alias: Type.Optional(Type.String()),
});

export const FileSchema = Type.Object({
  id: Type.String(),
  botId: Type.String(),
  key: Type.String(),
  url: Type.String({ description: 'Download URL: signed and short-lived, or permanent for public_content' }),
  size: Type.Union([Type.Integer(), Type.Null()]),
  contentType: Type.String(),
  tags: Type.Record(Type.String(), Type.String()),
  metadata: JsonObject,
  createdAt: Timestamp,
  updatedAt: Timestamp,
  accessPolicies: Type.Array(AccessPolicySchema),
  index: Type.Boolean(),
  status: FileStatusSchema,
  failedStatusReason: Type.Optional(Type.String()),
  expiresAt: Type.Optional(Timestamp),
  owner: FileOwnerSchema,
  indexingStack: Type.Optional(Type.Enum(['v1', 'v2'])),
});
export type File = Static<typeof FileSchema>;

export const UploadableFileSchema = Type.Object({
  ...FileSchema.properties,
  uploadUrl: Type.String({ description: 'Where to PUT the content: signed, expires after an hour' }),
});
export type UploadableFile = Static<typeof UploadableFileSchema>;

/** Stored as given, for reference (the hosted product's parsing, chunking, summarization... options). */
const IndexingSchema = Type.Object({ configuration: JsonObject });

/** Keys are paths of the bot's choosing: `/` is allowed, and arrives %2F-encoded in routes. */
export const FileKey = Text({ minLength: 1, maxLength: 1024 });

export const UpsertFileBodySchema = Type.Object({
  key: FileKey,
  tags: Type.Optional(FileTags),
  size: Type.Integer({ minimum: 0, description: 'Bytes: counts against the bot’s storage limit' }),
  index: Type.Optional(Type.Boolean()),
  indexing: Type.Optional(IndexingSchema),
  accessPolicies: Type.Optional(AccessPolicies),
  contentType: Type.Optional(Text({ minLength: 1, maxLength: 255 })),
  expiresAt: Type.Optional(Type.String({ format: 'date-time' })),
  publicContentImmediatelyAccessible: Type.Optional(Type.Boolean()),
  metadata: Type.Optional(JsonObject),
});
export type UpsertFileBody = Static<typeof UpsertFileBodySchema>;

export const UpdateFileMetadataBodySchema = Type.Object({
  metadata: Type.Optional(JsonObject),
  tags: Type.Optional(FileTagChanges),
  accessPolicies: Type.Optional(AccessPolicies),
  expiresAt: Type.Optional(Type.Union([Type.String({ format: 'date-time' }), Type.Null()])),
});
export type UpdateFileMetadataBody = Static<typeof UpdateFileMetadataBodySchema>;

export const PassageSubtype = Type.Enum([...PASSAGE_TYPES, 'page']);
export const PassageMetaSchema = Type.Object({
  type: Type.Optional(Type.Enum(['chunk', 'summary', 'consolidated', 'image'])),
  subtype: Type.Optional(PassageSubtype),
  pageNumber: Type.Optional(Type.Integer()),
  position: Type.Optional(Type.Integer()),
  sourceUrl: Type.Optional(Type.String()),
});
export type PassageMeta = Static<typeof PassageMetaSchema>;

export const PassageSchema = Type.Object({
  id: Type.String(),
  content: Type.String(),
  meta: PassageMetaSchema,
});
export type Passage = Static<typeof PassageSchema>;

export const NewPassageSchema = Type.Object({
  content: Text({ minLength: 1, maxLength: 100_000, description: 'Markdown' }),
  type: Type.Optional(Type.Enum(PASSAGE_TYPES)),
  pageNumber: Type.Optional(Type.Integer({ minimum: 1 })),
});
export type NewPassage = Static<typeof NewPassageSchema>;
export const MAX_PASSAGES_PER_FILE = 20_000;

export const ContextItemSchema = Type.Object({
  id: Type.Optional(Type.String()),
  text: Type.String(),
  offset: Type.Optional(Type.Integer()),
  type: Type.Enum(['preceding', 'subsequent', 'current', 'breadcrumb']),
});
export type ContextItem = Static<typeof ContextItemSchema>;

export const SearchPassageSchema = Type.Object({
  content: Type.String(),
  score: Type.Number({ description: 'Higher is closer; comparable within one answer' }),
  meta: PassageMetaSchema,
  file: Type.Object({
    id: Type.String(),
    key: Type.String(),
    contentType: Type.String(),
    metadata: JsonObject,
    tags: Type.Record(Type.String(), Type.String()),
    createdAt: Timestamp,
    updatedAt: Timestamp,
  }),
  context: Type.Optional(Type.Array(ContextItemSchema)),
});
export type SearchPassage = Static<typeof SearchPassageSchema>;

export const KnowledgeBaseSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  tags: Type.Record(Type.String(), Type.String()),
});
export type KnowledgeBase = Static<typeof KnowledgeBaseSchema>;
export const KnowledgeBaseListItemSchema = Type.Object({
  ...KnowledgeBaseSchema.properties,
  createdAt: Timestamp,
});
export type KnowledgeBaseListItem = Static<typeof KnowledgeBaseListItemSchema>;
export const KnowledgeBaseName = Text({ minLength: 1, maxLength: 200 });

/** The most files listFiles' `ids` may name. */
export const MAX_IDS_FILTER = 50;
/** Passages per page of listFilePassages. */
export const PASSAGES_PAGE_DEFAULT = 20;
export const PASSAGES_PAGE_MAX = 200;

/** searchFiles: its results, the passages around each one, and its query. */
export const SEARCH_LIMIT_DEFAULT = 20;
export const SEARCH_LIMIT_MAX = 50;
export const CONTEXT_DEPTH_DEFAULT = 1;
export const CONTEXT_DEPTH_MAX = 10;
export const QUERY_MAX_LENGTH = 1024;

/**
 * The tag filter of listFiles, searchFiles and listKnowledgeBases: tag -> condition, all ANDed.
 *   k: 'v'                  the tag equals v
 *   k: ['a', 'b']           equals any of them
 *   k: { in: 'a' | [...] }  the same
 *   k: { not: 'a' | [...] } has none of these values (a record without the tag has none)
 *   k: { exists: bool }     the tag is present, or absent
 * Query strings carry it dotted (`tags.k.not=a`), bracketed, or as a JSON string of the object.
 */
const Value = Text({ maxLength: 1000 });
const Values = Type.Union([Value, Type.Array(Value, { maxItems: 100 })]);

export const TagConditionSchema = Type.Union([
  Value,
  Type.Array(Value, { maxItems: 100 }),
  Type.Object(
    { in: Type.Optional(Values), not: Type.Optional(Values), exists: Type.Optional(Type.Boolean()) },
    { additionalProperties: false },
  ),
]);

export const TagConditions = Type.Record(Text({ minLength: 1, maxLength: 200 }), TagConditionSchema, {
  maxProperties: 50,
});

export const TagFilterSchema = Type.Union([
  Type.String({ description: 'The object form as JSON' }),
  TagConditions,
]);
export type TagFilter = Static<typeof TagFilterSchema>;
