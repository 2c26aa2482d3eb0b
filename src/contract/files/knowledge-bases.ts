import { Type } from 'typebox';
import {
  FileTagChanges,
  FileTags,
  KnowledgeBaseListItemSchema,
  KnowledgeBaseName,
  Text,
  TagFilterSchema,
} from '../../domain/files/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { Model } from '../models.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Knowledge bases';
const KnowledgeBaseAnswer = Type.Object({ knowledgeBase: Model.KnowledgeBase });
const IdParam = { id: Text({ minLength: 1 }) };

export const knowledgeBaseOperations = [
  operation({
    id: 'createKnowledgeBase',
    method: 'POST',
    path: '/files/knowledge-bases',
    access: 'write',
    tag,
    summary: 'Create a knowledge base',
    description:
      'A named grouping of files: a file joins it with the tags `source: knowledge-base` and `kbId: <id>`, and searchFiles with `tags.kbId` searches it.',
    body: { name: KnowledgeBaseName, tags: Type.Optional(FileTags) },
    response: KnowledgeBaseAnswer,
  }),
  operation({
    id: 'updateKnowledgeBase',
    method: 'PUT',
    path: '/files/knowledge-bases/:id',
    access: 'write',
    tag,
    summary: 'Rename a knowledge base, or change its tags (`null` deletes one)',
    params: IdParam,
    body: { name: KnowledgeBaseName, tags: Type.Optional(FileTagChanges) },
    response: KnowledgeBaseAnswer,
  }),
  operation({
    id: 'deleteKnowledgeBase',
    method: 'DELETE',
    path: '/files/knowledge-bases/:id',
    access: 'write',
    tag,
    summary: 'Delete a knowledge base (its files stay)',
    params: IdParam,
    response: EmptySchema,
  }),
  listOperation({
    id: 'listKnowledgeBases',
    path: '/files/knowledge-bases',
    tag,
    summary: 'List knowledge bases',
    query: { tags: Type.Optional(TagFilterSchema) },
    key: 'knowledgeBases',
    item: KnowledgeBaseListItemSchema,
  }),
] as const;
