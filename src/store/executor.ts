import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';

export type Db = Kysely<Database>;
/** The database or a transaction on it: what repository functions run against. */
export type Executor = Db | Transaction<Database>;
