import { sql } from 'kysely';
import type { RawBuilder, SqlBool } from 'kysely';
import { invalidPayload } from './errors.ts';
import { PAGE_SIZE_DEFAULT, PAGE_SIZE_MAX } from './page-size.ts';

export type SortDirection = 'asc' | 'desc';

export interface PageRequest {
  nextToken?: string;
  pageSize?: number;
}

export interface Page<T> {
  items: T[];
  nextToken?: string;
}

/** Where a walk stopped: the sort value and id of the last item served. */
interface Cursor {
  sort: string;
  value: string;
  id: string;
}

/**
 * Keyset pagination over (sort column, id): the token names the last row served, so rows created
 * or deleted meanwhile never shift a walk, and every row that exists throughout is served once.
 * The token also names its sort, so a token cannot be replayed under another ordering.
 */
export class Keyset {
  constructor(
    readonly column: string,
    readonly direction: SortDirection,
    readonly idColumn = 'id',
  ) {}

  private get sortName(): string {
    return `${this.column}:${this.direction}`;
  }

  decode(token: string | undefined): Cursor | undefined {
    if (token === undefined || token === '') return undefined;
    try {
      const parsed = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown;
      // NUL cannot be stored in Postgres text, so no token of a real walk holds one.
      if (
        Array.isArray(parsed) &&
        parsed.length === 3 &&
        parsed.every((p) => typeof p === 'string' && !p.includes('\u0000'))
      ) {
        const [sort, value, id] = parsed as [string, string, string];
        if (sort === this.sortName) return { sort, value, id };
      }
    } catch {
      // fall through to the error below
    }
    throw invalidPayload('nextToken is not a token of this list and ordering');
  }

  /** The condition "after the cursor" in this ordering, on every store. */
  after(cursor: Cursor): RawBuilder<SqlBool> {
    const op = sql.raw(this.direction === 'asc' ? '>' : '<');
    const col = sql.ref(this.column);
    const id = sql.ref(this.idColumn);
    return sql<SqlBool>`(${col} ${op} ${cursor.value} or (${col} = ${cursor.value} and ${id} ${op} ${cursor.id}))`;
  }

  /** Rows must have been fetched with `limit(pageSize + 1)` in this ordering; `key` gives a row's sort value and id. */
  page<Row>(rows: Row[], pageSize: number, key: (row: Row) => [string, string]): Page<Row> {
    const more = rows.length > pageSize;
    const served = more ? rows.slice(0, pageSize) : rows;
    const last = served[served.length - 1];
    const page: Page<Row> = { items: served };
    if (more && last !== undefined) {
      const [value, id] = key(last);
      page.nextToken = Buffer.from(JSON.stringify([this.sortName, value, id])).toString('base64url');
    }
    return page;
  }
}

export function pageSizeOf(request: PageRequest): number {
  const size = request.pageSize ?? PAGE_SIZE_DEFAULT;
  if (!Number.isInteger(size) || size < 1 || size > PAGE_SIZE_MAX) {
    throw invalidPayload(`pageSize must be an integer from 1 to ${PAGE_SIZE_MAX}`);
  }
  return size;
}

/**
 * The token of a walk over distinct values (tag keys, tag values): the last value served, which is
 * a position since values are distinct.
 */
export const valueToken = {
  encode(value: string): string {
    return Buffer.from(JSON.stringify(value)).toString('base64url');
  },
  decode(token: string | undefined): string | undefined {
    if (token === undefined || token === '') return undefined;
    try {
      const value: unknown = JSON.parse(Buffer.from(token, 'base64url').toString('utf8'));
      if (typeof value === 'string' && !value.includes('\u0000')) return value;
    } catch {
      // the same answer as a token that decodes to something else
    }
    throw invalidPayload('nextToken is not a token of this list');
  },
};

/** A page of distinct values fetched with `limit(pageSize + 1)`, with the token of the next. */
export function valuePage<T>(rows: T[], pageSize: number, value: (row: T) => string): Page<T> {
  const served = rows.slice(0, pageSize);
  const last = served[served.length - 1];
  return {
    items: served,
    ...(rows.length > pageSize && last !== undefined && { nextToken: valueToken.encode(value(last)) }),
  };
}
