import { sql } from 'kysely';
import type { Store } from '../../store/index.ts';
import type { BotActor } from '../workspace/actors.ts';
import { pageSizeOf, valuePage, valueToken } from '../shared/pagination.ts';
import type { Page, PageRequest } from '../shared/pagination.ts';
import { TAGGED_TYPES } from './schemas.ts';
import type { TaggedType } from './schemas.ts';

export interface TagValuesQuery extends PageRequest {
  type: TaggedType;
}

/** The distinct values one tag key takes among a bot's users, conversations or messages, in order. */
export class TagValues {
  constructor(private readonly store: Store) {}

  async list(actor: BotActor, key: string, query: TagValuesQuery): Promise<Page<{ value: string }>> {
    const pageSize = pageSizeOf(query);
    const after = valueToken.decode(query.nextToken);
    const table = TAGGED_TYPES[query.type];
    const { rows } = await sql<{ value: string }>`select distinct tags.value as value from tags
      join ${sql.table(table)} on ${sql.ref(`${table}.id`)} = tags.resource_id
      where ${sql.ref(`${table}.bot_id`)} = ${actor.botId} and tags.key = ${key}
      ${after === undefined ? sql`` : sql`and tags.value > ${after}`}
      order by tags.value limit ${pageSize + 1}`.execute(this.store.db);
    return valuePage(rows, pageSize, (row) => row.value);
  }
}
