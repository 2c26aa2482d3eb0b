import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { sql } from 'kysely';
import type { RawBuilder } from 'kysely';
import fc from 'fast-check';
import * as chat from '@botpress/chat';
import { createTestBot } from '../helpers/runtime.ts';
import type { TestBot } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';

/**
 * Malformed requests to every route of the API description, with valid credentials so that they get
 * past authentication: no answer is a 5xx, none takes more than a few seconds, and a request that is
 * refused (4xx) changes nothing in the store. New routes are covered as they appear in /openapi.json.
 */

/** Requests per route and store. */
const RUNS = Number(process.env.FUZZ_RUNS ?? 12);
/**
 * The same requests on every run, so that a red run is a regression and can be replayed; explore with
 * FUZZ_SEED=<another number> (a failing seed found that way is worth a fixed case of its own).
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261123);
fc.configureGlobal({ seed: SEED });
const HANG_MS = 5000;

interface Schema {
  type?: string | string[];
  properties?: Record<string, Schema>;
  items?: Schema;
  required?: string[];
}
interface Parameter {
  in: string;
  name: string;
  schema?: Schema;
}
interface OperationDoc {
  operationId?: string;
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: Schema }> };
}
interface OpenApi {
  paths: Record<string, Record<string, OperationDoc>>;
}

/** Values that broke servers before: NUL characters, numbers past what stores and dates hold, depth, size. */
const hostileString = fc.oneof(
  fc.string(),
  fc.constantFrom(
    '\u0000',
    'a\u0000b',
    '',
    ' ',
    '%',
    '%00',
    '../..',
    '\ud800',
    '💥',
    '1e400',
    '-1',
    '1e16',
    'NaN',
    'null',
    'true',
    '[]',
    '{}',
    "'; drop table bots; --",
    'x'.repeat(5000),
  ),
);
const hostileNumber = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(1e16, -1e16, 1e308, -1, 0, 2 ** 31, 2 ** 53, 1.5),
);
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileString,
  hostileNumber,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 3 }),
  fc.constantFrom(
    { '\u0000': 'x' },
    Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`t${i}`, 'v'])),
  ),
);

/** A body whose `field` nests `depth` levels deep, as JSON text (written out: JSON.stringify cannot). */
class DeepText {
  constructor(
    readonly field: string,
    readonly depth: number,
  ) {}
  toString(): string {
    return `{${JSON.stringify(this.field)}:${'{"a":['.repeat(this.depth)}1${']}'.repeat(this.depth)}}`;
  }
}

/** A body: the declared fields (some left out), each valid-looking or hostile, plus stray ones, or deep JSON. */
function bodyOf(schema: Schema | undefined): fc.Arbitrary<unknown> {
  const props = Object.keys(schema?.properties ?? {});
  const fields = fc.record(Object.fromEntries(props.map((p) => [p, hostileValue])), { requiredKeys: [] });
  return fc.oneof(
    fields,
    fc
      .tuple(fields, fc.dictionary(hostileString, hostileValue, { maxKeys: 3 }))
      .map(([a, b]) => ({ ...b, ...a })),
    hostileValue,
    fc.constantFrom(...[...props, 'payload'].flatMap((p) => [new DeepText(p, 100), new DeepText(p, 50_000)])),
  );
}

/** A query string: the declared parameters with hostile values, nested and repeated keys, lots of tags. */
function queryOf(params: Parameter[]): fc.Arbitrary<string> {
  const declared = params.filter((p) => p.in === 'query').map((p) => p.name);
  const pair = fc.tuple(
    fc.oneof(
      fc.constantFrom(...(declared.length ? declared : ['x'])),
      fc.constantFrom('tags[a][b]', 'tags.a.b', 'tags[k]', 'sortField', 'pageSize', 'nextToken'),
      hostileString,
    ),
    hostileString,
  );
  return fc
    .oneof(
      fc.array(pair, { maxLength: 6 }),
      fc.constant(Array.from({ length: 300 }, (_, i) => [`tags[k${i}]`, 'v'] as [string, string])),
    )
    .map((pairs) => pairs.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&'));
}

/** Percent-encoding, and for a string with a lone surrogate the bytes of one (invalid UTF-8: a test too). */
function encode(text: string): string {
  try {
    return encodeURIComponent(text);
  } catch {
    return `${encodeURIComponent(text.replace(/[\ud800-\udfff]/g, ''))}%ED%A0%80`;
  }
}

for (const store of await testStores()) {
  describe(`fuzzing every route with malformed requests (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let webhookId: string;
    let userKey: string;
    before(async () => {
      t = await startTestServer(store);
      // Scheduled events and expiring states the fuzz creates must not change the store while it compares.
      await t.server.sweeper.stop();
      bot = await createTestBot(t, 'fuzzed');
      const channel = (await t.client().getBot({ id: bot.botId })).bot.integrations.chat;
      assert.ok(channel?.webhookId);
      webhookId = channel.webhookId;
      const client = await chat.Client.connect({ apiUrl: `${t.url}/chat/${webhookId}` });
      userKey = client.user.key;
    });
    after(() => t.close());

    /** The query that reads every table's rows and last update, built once: the tables do not change. */
    let snapshotQuery: RawBuilder<{ s: string }> | undefined;
    async function snapshotOfTables(): Promise<RawBuilder<{ s: string }>> {
      const db = t.server.store.db;
      const { rows: tables } =
        store.name === 'postgres'
          ? await sql<{ name: string; updated: boolean }>`select table_name as name,
              exists (select 1 from information_schema.columns c where c.table_schema = t.table_schema
                and c.table_name = t.table_name and c.column_name = 'updated_at') as updated
              from information_schema.tables t where t.table_schema = current_schema()`.execute(db)
          : await sql<{ name: string; updated: number }>`select name,
              exists (select 1 from pragma_table_info(m.name) where name = 'updated_at') as updated
              from sqlite_master m where type = 'table'`.execute(db);
      const parts = tables
        .filter((table) => !table.name.startsWith('kysely_') && !table.name.startsWith('sqlite_'))
        .map(
          (table) =>
            sql`(select ${sql.lit(table.name)} || ':' || count(*) ${
              table.updated ? sql`|| ':' || coalesce(max(updated_at), '')` : sql``
            } from ${sql.table(table.name)})`,
        );
      return sql<{ s: string }>`select ${sql.join(parts, sql` || ',' || `)} as s`;
    }

    /** Rows and the last update of every table: what a refused request must leave as it was. */
    async function snapshot(): Promise<string> {
      snapshotQuery ??= await snapshotOfTables();
      const { rows } = await snapshotQuery.execute(t.server.store.db);
      return rows[0]?.s ?? '';
    }

    function headersFor(path: string): Record<string, string> {
      if (path.startsWith('/v1/chat')) return { authorization: `Bearer ${bot.key}`, 'x-bot-id': bot.botId };
      if (path.startsWith('/chat/')) return { 'x-user-key': userKey };
      return { authorization: `Bearer ${t.token}`, 'x-workspace-id': t.workspaceId };
    }

    test('no 5xx, no hang, and nothing changed by a refused request', async () => {
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as OpenApi;
      const failures: string[] = [];
      for (const [path, methods] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(methods)) {
          // The event stream stays open on purpose; its parameters are checked like any other route's.
          const streaming = path.endsWith('/listen');
          const params = op.parameters ?? [];
          const body = op.requestBody?.content?.['application/json']?.schema;
          const request = fc.record({
            path: fc.constant(path).chain((p) =>
              fc
                .tuple(
                  ...(p.match(/\{[^}]+\}/g) ?? []).map((name) =>
                    name === '{webhookId}' ? fc.constant(webhookId) : hostileString,
                  ),
                )
                .map((values) => {
                  let i = 0;
                  return p.replace(/\{[^}]+\}/g, () => encode(values[i++] ?? ''));
                }),
            ),
            query: queryOf(params),
            body: bodyOf(body),
          });
          for (const sample of fc.sample(request, RUNS)) {
            const url = `${t.url}${sample.path}${sample.query ? `?${sample.query}` : ''}`;
            const name = `${method.toUpperCase()} ${sample.path.slice(0, 80)}?${sample.query.slice(0, 80)}`;
            const before = await snapshot();
            const text =
              method === 'get'
                ? undefined
                : sample.body instanceof DeepText
                  ? sample.body.toString()
                  : (JSON.stringify(sample.body) ?? 'null');
            let status: number;
            try {
              const res = await fetch(url, {
                method: method.toUpperCase(),
                headers: {
                  ...headersFor(path),
                  ...(method !== 'get' && { 'content-type': 'application/json' }),
                },
                ...(text !== undefined && { body: text }),
                signal: AbortSignal.timeout(HANG_MS),
              });
              status = res.status;
              if (streaming && status === 200) {
                await res.body?.cancel();
                continue;
              }
              await res.arrayBuffer();
            } catch (err) {
              failures.push(`${name}: no answer within ${HANG_MS} ms (${(err as Error).message})`);
              continue;
            }
            if (status >= 500) failures.push(`${name}: ${status}`);
            if (status >= 400 && status < 500 && (await snapshot()) !== before) {
              failures.push(`${name}: refused with ${status}, yet the store changed`);
            }
          }
        }
      }
      assert.deepEqual(failures, [], `FUZZ_SEED=${SEED}`);
    });
  });
}
