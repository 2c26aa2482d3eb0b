// The API description as /docs's "Try it out" uses it: every operation has a summary and says how it is
// authenticated, with security schemes that name the headers; a request built only from what the
// description declares (as Swagger UI builds it) is accepted, for each API.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { operationsOf, readOpenApi } from './helpers/openapi.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

interface SecurityScheme {
  type: string;
  scheme?: string;
  in?: string;
  name?: string;
}
interface Operation {
  operationId?: string;
  summary?: string;
  security?: Record<string, string[]>[];
}
interface OpenApi {
  components: { securitySchemes: Record<string, SecurityScheme> };
  paths: Record<string, Record<string, Operation>>;
}

for (const store of await testStores()) {
  describe(`the API description, for /docs (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let doc: OpenApi;
    before(async () => {
      t = await startTestServer(store);
      doc = await readOpenApi<OpenApi>(t.url);
    });
    after(() => t?.close());

    const operations = () => operationsOf(doc.paths);

    test('every operation has a summary and declares its security', () => {
      const lacking = operations()
        .filter(({ op }) => !op.summary || op.security === undefined)
        .map(({ method, path }) => `${method} ${path}`);
      assert.deepEqual(lacking, []);
    });

    test('the security schemes declare the headers each API reads', () => {
      const schemes = doc.components.securitySchemes;
      assert.deepEqual(schemes.bearer, { ...schemes.bearer, type: 'http', scheme: 'bearer' });
      for (const [name, header] of [
        ['workspaceId', 'x-workspace-id'],
        ['botId', 'x-bot-id'],
        ['userKey', 'x-user-key'],
        ['adminSecret', 'x-admin-secret'],
      ]) {
        assert.deepEqual(schemes[name as string], {
          ...schemes[name as string],
          type: 'apiKey',
          in: 'header',
          name: header,
        });
      }
      const security = (method: string, path: string) => doc.paths[path]?.[method]?.security;
      assert.deepEqual(security('get', '/v1/admin/bots'), [{ bearer: [], workspaceId: [] }]);
      assert.deepEqual(security('get', '/v1/admin/account/me'), [{ bearer: [] }]);
      assert.deepEqual(security('post', '/v1/chat/actions'), [{ bearer: [], botId: [] }]);
      assert.deepEqual(security('get', '/chat/{webhookId}/users/me'), [{ userKey: [] }]);
      assert.deepEqual(security('get', '/webchat/{clientId}/users/me'), [{ userKey: [] }]);
      assert.deepEqual(security('get', '/healthz'), []);
    });

    test('a request with the headers the description names is accepted, on each API', async () => {
      const { bot } = await t.client().createBot({ name: 'docs' });
      const { value: botKey } = await t.client().createBotApiKey({ botId: bot.id });
      const channel = (await t.client().getBot({ id: bot.id })).bot.integrations.chat;
      assert.ok(channel);
      const created = await fetch(`${t.url}/chat/${channel.webhookId}/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
      const { key: userKey } = (await created.json()) as { key: string };
      const credentials: Record<string, string> = {
        bearer: t.token,
        workspaceId: t.workspaceId,
        botId: bot.id,
        userKey,
      };
      /** The headers Swagger UI sends for an operation's first security requirement. */
      const headersOf = (op: Operation, bearer: string) => {
        const headers: Record<string, string> = {};
        for (const scheme of Object.keys(op.security?.[0] ?? {})) {
          if (scheme === 'bearer') headers.authorization = `Bearer ${bearer}`;
          else
            headers[doc.components.securitySchemes[scheme]?.name as string] = credentials[scheme] as string;
        }
        return headers;
      };
      for (const [path, bearer, fill] of [
        ['/v1/admin/bots/{id}', t.token, { id: bot.id }],
        ['/v1/chat/conversations', botKey, {}],
        ['/chat/{webhookId}/users/me', '', { webhookId: channel.webhookId }],
        ['/webchat/{clientId}/conversations', '', { clientId: channel.webhookId }],
      ] as const) {
        const op = doc.paths[path]?.get;
        assert.ok(op, `GET ${path} is described`);
        const url = path.replace(
          /\{(\w+)\}/g,
          (_, name: string) => (fill as Record<string, string>)[name] as string,
        );
        const res = await fetch(`${t.url}${url}`, { headers: headersOf(op, bearer) });
        assert.equal(res.status, 200, `GET ${path}: ${await res.text()}`);
      }
    });
  });
}
