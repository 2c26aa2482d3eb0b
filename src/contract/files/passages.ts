import { Type } from 'typebox';
import { PASSAGES_PAGE_MAX } from '../../domain/files/files.ts';
import { MAX_PASSAGES_PER_FILE, NewPassageSchema, PassageSchema, Text } from '../../domain/files/schemas.ts';
import { EmptySchema } from '../schemas.ts';
import { listOperation, operation } from './define.ts';

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
    item: PassageSchema,
    handler: (d, actor, { id, ...query }) => d.files.listPassages(actor, id, query),
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
    handler: async (d, actor, { id, passages }) => {
      await d.files.setPassages(actor, id, passages);
      return {};
    },
  }),
];
