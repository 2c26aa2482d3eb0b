import { Type } from 'typebox';
import { Text } from '../../domain/files/schemas.ts';
import { listOperation } from '../operation.ts';

const tag = 'Files';

export const fileTagOperations = [
  listOperation({
    id: 'listFileTags',
    path: '/files/tags',
    tag,
    summary: 'List the tag keys of the bot’s files',
    key: 'tags',
    item: Type.String(),
  }),
  listOperation({
    id: 'listFileTagValues',
    path: '/files/tags/:tag/values',
    tag,
    summary: 'List the values of one tag among the bot’s files',
    params: { tag: Text({ minLength: 1 }) },
    key: 'values',
    item: Type.String(),
  }),
] as const;
