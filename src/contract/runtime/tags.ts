import { Type } from 'typebox';
import { TAGGED_TYPES } from '../../domain/runtime/schemas.ts';
import type { TaggedType } from '../../domain/runtime/schemas.ts';
import { listOperation } from '../operation.ts';

export const tagOperations = [
  listOperation({
    id: 'listTagValues',
    path: '/tags/:key/values',
    tag: 'Tags',
    summary: 'List the values of a tag',
    description: 'The distinct values of a tag among the bot’s users, conversations or messages.',
    params: { key: Type.String() },
    query: { type: Type.Enum(Object.keys(TAGGED_TYPES) as TaggedType[]) },
    key: 'tags',
    item: Type.Object({ value: Type.String() }),
  }),
] as const;
