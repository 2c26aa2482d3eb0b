import { Type } from 'typebox';
import {
  MAX_PASSAGES_PER_FILE,
  NewPassageSchema,
  Text,
  PASSAGES_PAGE_MAX,
} from '../../domain/files/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { Model } from '../models.ts';
import { listOperation, operation } from '../operation.ts';

const tag = 'Files';
const FileRef = { id: Text({ minLength: 1, description: 'The file’s id or key' }) };

export const passageOperations = [
  listOperation({
    id: 'listFilePassages',
    path: '/files/:id/passages',
    tag,
    summary: 'List the passages of an indexed file, in document order',
    params: FileRef,
    query: { limit: Type.Optional(Type.Integer({ minimum: 1, maximum: PASSAGES_PAGE_MAX })) },
    key: 'passages',
    item: Model.Passage,
  }),
  operation({
    id: 'setFilePassages',
    method: 'PUT',
    path: '/files/:id/passages',
    access: 'write',
    tag,
    summary: 'Replace a file’s passages with your own',
    description:
      'Asynchronous: the file becomes `indexing_pending`, then `indexing_completed` once the passages are stored and searchable.',
    params: FileRef,
    body: { passages: Type.Array(NewPassageSchema, { maxItems: MAX_PASSAGES_PER_FILE }) },
    response: EmptySchema,
  }),
] as const;
