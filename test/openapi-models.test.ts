// The models the APIs share are named once in /openapi.json (`components.schemas`) and referenced from
// the operations, never copied into them; and answers built from the references are as whole as before.
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import { after, before, describe, test } from 'node:test';
import { isApiError } from '@botpress/client';
import { operationsOf, readOpenApi } from './helpers/openapi.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

type Json = { [key: string]: unknown };

interface OpenApi {
  components: { schemas?: Record<string, Json> };
  paths: Record<string, Record<string, Json>>;
}

/** The models the hosted platform's spec names too, and the error body every failure answers. */
const EXPECTED_MODELS = [
  'Bot',
  'Integration',
  'Workspace',
  'Member',
  'User',
  'Conversation',
  'Message',
  'Event',
  'State',
  'File',
  'KnowledgeBase',
  'Passage',
  'Table',
  'Row',
  'ErrorBody',
];

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Every schema object in `node`, itself included, with where it is. */
function* subschemas(node: unknown, at: string): Generator<{ at: string; schema: Json }> {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) yield* subschemas(item, `${at}/${index}`);
    return;
  }
  if (!isJson(node)) return;
  yield { at, schema: node };
  for (const [key, value] of Object.entries(node)) yield* subschemas(value, `${at}/${key}`);
}

/** The `$ref`s anywhere under `node`. */
function referencesIn(node: unknown): Set<string> {
  const found = new Set<string>();
  for (const { schema } of subschemas(node, '')) if (typeof schema.$ref === 'string') found.add(schema.$ref);
  return found;
}

for (const store of await testStores()) {
  describe(`named models (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let doc: OpenApi;
    before(async () => {
      t = await startTestServer(store);
      doc = await readOpenApi<OpenApi>(t.url);
    });
    after(() => t?.close());

    const operations = () =>
      operationsOf(doc.paths).map(({ method, path, op }) => ({ name: `${method} ${path}`, op }));

    test('components.schemas holds the shared models, each referenced by some operation', () => {
      const named = Object.keys(doc.components.schemas ?? {});
      assert.deepEqual(
        EXPECTED_MODELS.filter((model) => !named.includes(model)),
        [],
      );
      const referenced = new Set(operations().flatMap(({ op }) => [...referencesIn(op)]));
      assert.deepEqual(
        named.filter((model) => !referenced.has(`#/components/schemas/${model}`)),
        [],
        'a named model no operation references',
      );
    });

    test('no operation inlines a copy of a named model', () => {
      const models = Object.entries(doc.components.schemas ?? {});
      const copies = operations().flatMap(({ name, op }) =>
        [...subschemas(op, name)].flatMap(({ at, schema }) =>
          models.filter(([, model]) => isDeepStrictEqual(schema, model)).map(([model]) => `${at}: ${model}`),
        ),
      );
      assert.deepEqual(copies, []);
    });

    test('every reference names a model the document holds', () => {
      const dangling = [...referencesIn(doc)].filter(
        (ref) => !Object.hasOwn(doc.components.schemas ?? {}, ref.replace('#/components/schemas/', '')),
      );
      assert.deepEqual(dangling, []);
    });

    test('answers written from references keep their nested models whole', async () => {
      const admin = t.client();
      const { bot } = await admin.createBot({ name: 'models' });
      const got = (await admin.getBot({ id: bot.id })).bot;
      assert.equal(got.id, bot.id);
      assert.ok(got.integrations.chat?.webhookId, 'the bot carries its chat integration');
      const { value: key } = await admin.createBotApiKey({ botId: bot.id });

      const runtime = t.client({ token: key, botId: bot.id });
      const { user } = await runtime.createUser({ tags: {} });
      const { conversation } = await runtime.createConversation({ channel: 'channel', tags: {} });
      const payload = { text: 'hello', nested: { list: [1, { deep: true }] } };
      const { message } = await runtime.createMessage({
        conversationId: conversation.id,
        userId: user.id,
        type: 'text',
        payload,
        tags: {},
      });
      const read = (await runtime.getMessage({ id: message.id })).message;
      assert.deepEqual(read, message);
      assert.deepEqual(read.payload, payload);
      assert.equal(read.conversationId, conversation.id);

      for (const field of ['id', 'createdAt', 'updatedAt', 'type', 'payload', 'direction', 'userId', 'tags'])
        assert.ok(Object.hasOwn(read, field), `the message keeps its ${field}`);

      const current = (await runtime.getConversation({ id: conversation.id })).conversation;
      assert.equal(current.messageCount, 1);
      const listed = await runtime.listConversations({});
      assert.deepEqual(
        listed.conversations.find((each) => each.id === conversation.id),
        current,
      );

      const failure = await runtime.getUser({ id: 'user_missing' }).catch((error: unknown) => error);
      assert.ok(isApiError(failure));
      assert.equal(failure.code, 404);
      assert.equal(failure.type, 'ResourceNotFound');
      assert.ok(failure.id && failure.message, 'the error body keeps its id and message');
    });
  });
}
