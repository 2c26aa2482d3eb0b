// Prepared queries (src/store/prepared.ts) compile to what the query builder compiles, on each dialect.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  DummyDriver,
  Kysely,
  PostgresAdapter,
  PostgresIntrospector,
  PostgresQueryCompiler,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  sql,
} from 'kysely';
import type { Database } from '../src/store/schema.ts';
import { prepare } from '../src/store/prepared.ts';

/** A database that only compiles, in each dialect. */
const dialects = {
  postgres: new Kysely<Database>({
    dialect: {
      createAdapter: () => new PostgresAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new PostgresIntrospector(db),
      createQueryCompiler: () => new PostgresQueryCompiler(),
    },
  }),
  sqlite: new Kysely<Database>({
    dialect: {
      createAdapter: () => new SqliteAdapter(),
      createDriver: () => new DummyDriver(),
      createIntrospector: (db) => new SqliteIntrospector(db),
      createQueryCompiler: () => new SqliteQueryCompiler(),
    },
  }),
};

type Args = { botId: string; conversationId: string; now: string; limit: number };

const build = (db: Kysely<Database>, a: Args) =>
  db
    .updateTable('conversations')
    .set((eb) => ({ message_count: eb('message_count', '+', 1), updated_at: a.now }))
    .where('id', '=', a.conversationId)
    .where('bot_id', '=', a.botId)
    .where('channel', '=', 'webchat')
    .where(sql<boolean>`message_count < ${a.limit}`)
    .returning('signal_seq');

test('a prepared query compiles to what the builder compiles with the same values, on each dialect', () => {
  const query = prepare(['botId', 'conversationId', 'now', 'limit'], build);
  for (const [name, db] of Object.entries(dialects)) {
    for (const args of [
      { botId: 'bot_1', conversationId: 'conv_1', now: '2026-11-25T10:00:00.000Z', limit: 10 },
      { botId: 'bot_2', conversationId: 'conv_9', now: '2026-11-25T11:00:00.000Z', limit: 3 },
    ]) {
      const prepared = query.compile(db, args);
      const built = build(db, args).compile();
      assert.equal(prepared.sql, built.sql, name);
      assert.deepEqual(prepared.parameters, built.parameters, name);
    }
  }
  // Each dialect has its own text.
  const args = { botId: 'b', conversationId: 'c', now: 'n', limit: 1 };
  assert.notEqual(query.compile(dialects.postgres, args).sql, query.compile(dialects.sqlite, args).sql);
});

test('a prepared query refuses arguments other than those it was built with, and arguments it does not use', () => {
  const query = prepare(['botId', 'conversationId', 'now', 'limit'], build);
  const db = dialects.sqlite;
  assert.throws(
    () => query.compile(db, { botId: 'b', conversationId: 'c', now: 'n' } as unknown as Args),
    /takes botId, conversationId, now, limit/,
  );
  const unused = prepare(['botId', 'extra'], (d, a: { botId: string; extra: string }) =>
    d.selectFrom('bots').select('id').where('id', '=', a.botId),
  );
  assert.throws(() => unused.compile(db, { botId: 'b', extra: 'x' }), /does not use its arguments extra/);
});
