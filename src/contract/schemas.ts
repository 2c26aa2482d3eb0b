import { Type } from 'typebox';
import type { TSchema } from 'typebox';
import { ERROR_TYPES } from '../domain/shared/error-types.ts';
import type { ErrorType } from '../domain/shared/error-types.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from '../domain/shared/page-size.ts';

export const ErrorBodySchema = Type.Object(
  {
    id: Type.String(),
    code: Type.Integer(),
    type: Type.Enum(Object.keys(ERROR_TYPES) as ErrorType[]),
    message: Type.String(),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { description: 'Every non-2xx answer' },
);

export const EmptySchema = Type.Object({});

export const PageQuery = {
  nextToken: Type.Optional(Type.String({ description: 'The `meta.nextToken` of the previous page' })),
  pageSize: Type.Optional(
    Type.Integer({
      minimum: 1,
      maximum: PAGE_SIZE_MAX,
      default: PAGE_SIZE_DEFAULT,
      description: 'Items per page',
    }),
  ),
};

export const SortQuery = {
  sortField: Type.Optional(Type.Union([Type.Literal('createdAt'), Type.Literal('updatedAt')])),
  sortDirection: Type.Optional(Type.Union([Type.Literal('asc'), Type.Literal('desc')])),
};

/** `meta` of the get-or-create operations. */
export const CreatedMeta = Type.Object({ created: Type.Boolean() });

export const MetaSchema = Type.Object({ nextToken: Type.Optional(Type.String()) });

/** `{ [key]: Item[], meta: { nextToken? } }`: the shape of every paginated list. */
export function listOf<K extends string, T extends TSchema>(key: K, item: T) {
  return Type.Object({ [key]: Type.Array(item), meta: MetaSchema } as {
    [P in K]: ReturnType<typeof Type.Array<T>>;
  } & {
    meta: typeof MetaSchema;
  });
}

/** The `{id}` path parameter, as an operation's properties. */
export const IdParam = { id: Type.String() };

/** A key's or token's note: what its owner wrote to recognise it by. */
export const KeyNote = Type.String({ maxLength: 500 });
