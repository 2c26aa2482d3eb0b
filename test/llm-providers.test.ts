// Workspaces' own model providers and bots' own `best`/`fast` (docs/llm.md, "A workspace's own
// providers"): made through the Admin API, reached by `<name>:<model>` on the Cognitive API, each
// workspace's its own, their keys never answered, their base URLs under the address policy of tenants'
// targets. Two of the project's model servers: `server` is the operator's (`default`), `theirs` a
// workspace's, with model ids of its own and a key.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { DEFAULT_MODELS, parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { createTestBot, rawRuntime } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

const THEIR_KEY = 'sk-their-own-provider-key-0123456789abcdef';
const WRONG_KEY = 'sk-a-key-their-provider-refuses-9876543210';
/** A model id both servers serve: which one answered is told by what each received. */
const SHARED = 'shared-id';

interface Answer {
  status: number;
  body: Record<string, unknown>;
  /** The body as sent, to look for what must never be in it. */
  text: string;
}

interface Generation {
  output: string;
  metadata: {
    provider: string;
    model: string;
    cost: number;
    cached: boolean;
    usage: { inputTokens: number; outputTokens: number };
    warnings?: { type: string; message: string }[];
  };
}

function isGeneration(value: unknown): value is Generation {
  return typeof value === 'object' && value !== null && 'output' in value && 'metadata' in value;
}

/** The JSON block of docs/llm.md below `<!-- marker -->`. */
async function docsJson(marker: string): Promise<Record<string, unknown>> {
  return JSON.parse(await docsBlock('docs/llm.md', marker)) as Record<string, unknown>;
}

/** The chat completions a model server received. */
function completions(models: ModelServer) {
  return models.requests.filter((r) => r.path === '/v1/chat/completions');
}

function lastCompletion(models: ModelServer) {
  const last = completions(models).at(-1);
  assert.ok(last, 'the provider received a chat completion');
  return last;
}

for (const store of await testStores()) {
  describe(
    `a workspace's own model providers and a bot's own models (${store.name})`,
    { skip: store.skip },
    () => {
      let server: ModelServer;
      let theirs: ModelServer;
      let t: TestServer;
      let bot: TestBot;
      /** Every Admin API and Cognitive API answer of the suite, to look for a key in. */
      const seen: string[] = [];

      async function admin(
        method: string,
        path: string,
        body?: unknown,
        as: { token?: string; workspaceId?: string } = {},
      ): Promise<Answer> {
        const res = await fetch(`${t.url}/v1/admin${path}`, {
          method,
          headers: {
            authorization: `Bearer ${as.token ?? t.token}`,
            'x-workspace-id': as.workspaceId ?? t.workspaceId,
            ...(body !== undefined && { 'content-type': 'application/json' }),
          },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        seen.push(text);
        return {
          status: res.status,
          body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
          text,
        };
      }

      async function generate(as: TestBot, request: unknown): Promise<Generation> {
        const res = await rawRuntime(t, as, 'POST', '/v2/cognitive/generate-text', request);
        seen.push(JSON.stringify(res.body));
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.ok(isGeneration(res.body));
        return res.body;
      }

      const ask = (content: string, model: string, skipCache = true) => ({
        messages: [{ role: 'user', content }],
        model,
        options: { skipCache },
      });

      before(async () => {
        server = await startModelServer({ models: [...DEFAULT_MODELS, SHARED] });
        theirs = await startModelServer({ models: ['big', 'small', SHARED], apiKey: THEIR_KEY });
        // The model servers are on loopback: the operator lets workspaces' providers be there.
        t = await startTestServer(store, { ...parleySettings(server), llmPrivateTargets: 'on' });
        bot = await createTestBot(t, 'provider-bot');
      });
      after(async () => {
        await t?.close();
        await server?.close();
        await theirs?.close();
      });

      test('a provider is made with its models read from its GET /models; its key is never answered', async () => {
        const made = await admin('POST', '/llm-providers', {
          name: 'mine',
          baseUrl: theirs.url,
          apiKey: THEIR_KEY,
          prices: { big: { input: 3, output: 5 } },
        });
        assert.equal(made.status, 201, made.text);
        assert.deepEqual(made.body.provider, {
          ...(made.body.provider as object),
          name: 'mine',
          baseUrl: theirs.url,
          hasApiKey: true,
          models: ['big', 'small', SHARED],
          modelsFrom: 'provider',
        });
        const read = theirs.requests.find((r) => r.path === '/v1/models');
        assert.equal(read?.headers.authorization, `Bearer ${THEIR_KEY}`, 'its models were read with its key');

        const listed = await admin('GET', '/llm-providers');
        assert.equal(listed.status, 200);
        assert.deepEqual(
          (listed.body.providers as { name: string }[]).map((p) => p.name),
          ['mine'],
        );

        const again = await admin('POST', '/llm-providers', {
          name: 'mine',
          baseUrl: theirs.url,
          models: ['x'],
        });
        assert.equal(again.status, 409);
        assert.equal(again.body.type, 'AlreadyExists');
        const reserved = await admin('POST', '/llm-providers', {
          name: 'default',
          baseUrl: theirs.url,
          models: ['x'],
        });
        assert.equal(reserved.status, 400);
        assert.match(String(reserved.body.message), /server’s provider/);
        const badName = await admin('POST', '/llm-providers', {
          name: 'My Models',
          baseUrl: theirs.url,
          models: ['x'],
        });
        assert.equal(badName.status, 400);
        const noModels = await admin('POST', '/llm-providers', { name: 'keyless', baseUrl: theirs.url });
        assert.equal(noModels.status, 400, 'its GET /models refuses a call without its key');
        assert.match(String(noModels.body.message), /GET \/models could not be read/);
      });

      test('`<name>:<model>` reaches the workspace’s provider with its key, priced by its own prices', async () => {
        const before = completions(server).length;
        const answer = await generate(bot, ask('to my own provider', 'mine:big'));
        assert.equal(answer.output, 'echo: to my own provider');
        assert.equal(answer.metadata.provider, 'mine');
        assert.equal(answer.metadata.model, 'mine:big');
        const sent = lastCompletion(theirs);
        assert.equal((sent.body as { model?: string }).model, 'big');
        assert.equal(sent.headers.authorization, `Bearer ${THEIR_KEY}`);
        assert.equal(completions(server).length, before, 'the server’s provider was not asked');
        const { inputTokens, outputTokens } = answer.metadata.usage;
        assert.ok(Math.abs(answer.metadata.cost - (inputTokens * 3 + outputTokens * 5) / 1e6) < 1e-12);

        // Metered as the bot's call, at the provider's price.
        const { records } = await t.client().getBotAnalytics({
          id: bot.botId,
          startDate: new Date(Date.now() - 60_000).toISOString(),
          endDate: new Date(Date.now() + 60_000).toISOString(),
        });
        const llm = records.map((r) => r.llm).find((block) => block.calls > 0);
        assert.ok(llm && Math.abs(llm.cost.sum - answer.metadata.cost) < 1e-12, JSON.stringify(llm));

        const plain = await generate(bot, ask('to the server', 'best'));
        assert.equal(plain.metadata.model, 'default:test-best', 'without a choice, best is the server’s');
      });

      test('a bot’s best choice routes `best` and `auto`; `fast` stays the server’s; a model not listed is refused', async () => {
        const initial = await admin('GET', `/bots/${bot.botId}/models`);
        assert.equal(initial.status, 200);
        assert.equal(initial.body.best, null);
        const available = initial.body.available as string[];
        for (const ref of ['default:test-best', 'default:test-fast', 'mine:big', 'mine:small'])
          assert.ok(available.includes(ref), `${ref} may be chosen: ${available.join(', ')}`);

        const chosen = await admin('PUT', `/bots/${bot.botId}/models`, { best: 'mine:small' });
        assert.equal(chosen.status, 200, chosen.text);
        assert.equal(chosen.body.best, 'mine:small');
        assert.equal(chosen.body.fast, null);
        for (const selector of ['best', 'auto']) {
          const answer = await generate(bot, ask(`by the bot's ${selector}`, selector));
          assert.equal(answer.metadata.model, 'mine:small');
          assert.equal((lastCompletion(theirs).body as { model?: string }).model, 'small');
        }
        const fast = await generate(bot, ask('quick', 'fast'));
        assert.equal(fast.metadata.model, 'default:test-fast');
        // A provider the bot does not have is answered by its best, with a warning.
        const hosted = await generate(bot, ask('a hosted model', 'openai:gpt-4o'));
        assert.equal(hosted.metadata.model, 'mine:small');
        assert.equal(hosted.metadata.warnings?.[0]?.type, 'fallback_used');

        const listed = await rawRuntime(t, bot, 'GET', '/v2/cognitive/models');
        const models = (listed.body as { models: { id: string; aliases: string[] }[] }).models;
        assert.equal(models[0]?.id, 'mine:small', 'the bot’s best is listed first');
        assert.deepEqual(models[0]?.aliases, ['best', 'auto']);
        assert.deepEqual(models.find((m) => m.id === 'default:test-fast')?.aliases, ['fast']);

        for (const wrong of ['mine:nope', 'elsewhere:big', 'best']) {
          const refused = await admin('PUT', `/bots/${bot.botId}/models`, { fast: wrong });
          assert.equal(refused.status, 400, `${wrong}: ${refused.text}`);
        }
        const reset = await admin('PUT', `/bots/${bot.botId}/models`, { best: null });
        assert.equal(reset.body.best, null);
        assert.equal(
          (await generate(bot, ask('back to the server', 'best'))).metadata.model,
          'default:test-best',
        );
      });

      test('another workspace neither sees nor reaches the provider; its own of the same name is its own', async () => {
        const { id: otherWorkspace } = await t.client().createWorkspace({ name: 'other' });
        const otherAdmin = t.client({ workspaceId: otherWorkspace });
        const { bot: created } = await otherAdmin.createBot({ name: 'other-bot' });
        const { value } = await otherAdmin.createBotApiKey({ botId: created.id });
        const other: TestBot = {
          botId: created.id,
          key: value,
          client: t.client({ token: value, botId: created.id }),
        };
        const as = { workspaceId: otherWorkspace };

        assert.deepEqual((await admin('GET', '/llm-providers', undefined, as)).body.providers, []);
        const theirsBefore = completions(theirs).length;
        const answer = await generate(other, ask('not mine to use', 'mine:big'));
        assert.equal(answer.metadata.model, 'default:test-best', 'answered by the best model instead');
        assert.equal(answer.metadata.warnings?.[0]?.type, 'fallback_used');
        assert.equal(
          completions(theirs).length,
          theirsBefore,
          'the other workspace’s provider was not asked',
        );
        const refused = await admin('PUT', `/bots/${other.botId}/models`, { best: 'mine:big' }, as);
        assert.equal(refused.status, 400);
        const elsewhere = await admin('GET', `/bots/${bot.botId}/models`, undefined, as);
        assert.equal(elsewhere.status, 404, 'nor another workspace’s bot');

        // The same name in the other workspace is another provider (the server's, declared): the same
        // request of the same model name is answered there, never from the first one's answers.
        const first = await generate(bot, ask('one question, two providers', `mine:${SHARED}`, false));
        assert.equal(first.metadata.provider, 'mine');
        const made = await admin(
          'POST',
          '/llm-providers',
          { name: 'mine', baseUrl: server.url, models: [SHARED] },
          as,
        );
        assert.equal(made.status, 201, made.text);
        const serverBefore = completions(server).length;
        const second = await generate(other, ask('one question, two providers', `mine:${SHARED}`, false));
        assert.equal(second.metadata.cached, false);
        assert.equal(completions(server).length, serverBefore + 1, 'the other workspace’s provider answered');
      });

      test('a provider made again under its name does not answer from the first one’s cached answers', async () => {
        const made = await admin('POST', '/llm-providers', {
          name: 'swap',
          baseUrl: theirs.url,
          apiKey: THEIR_KEY,
        });
        assert.equal(made.status, 201, made.text);
        const first = await generate(bot, ask('cache me', `swap:${SHARED}`, false));
        assert.equal(first.metadata.cached, false);
        assert.equal((await generate(bot, ask('cache me', `swap:${SHARED}`, false))).metadata.cached, true);
        assert.equal((await admin('DELETE', '/llm-providers/swap')).status, 200);
        const remade = await admin('POST', '/llm-providers', {
          name: 'swap',
          baseUrl: server.url,
          models: [SHARED],
        });
        assert.equal(remade.status, 201, remade.text);
        const serverBefore = completions(server).length;
        const again = await generate(bot, ask('cache me', `swap:${SHARED}`, false));
        assert.equal(again.metadata.cached, false);
        assert.equal(completions(server).length, serverBefore + 1);
      });

      test('update, refresh and delete; deleting a provider sends the bots that chose it back to the server’s', async () => {
        const made = await admin('POST', '/llm-providers', {
          name: 'declared',
          baseUrl: theirs.url,
          apiKey: THEIR_KEY,
          models: ['small'],
        });
        assert.equal(made.status, 201, made.text);
        assert.equal((made.body.provider as { modelsFrom: string }).modelsFrom, 'declared');
        const refreshed = await admin('POST', '/llm-providers/declared/refresh-models');
        assert.equal(refreshed.status, 200, refreshed.text);
        assert.deepEqual((refreshed.body.provider as { models: string[] }).models, ['big', 'small', SHARED]);
        assert.equal((refreshed.body.provider as { modelsFrom: string }).modelsFrom, 'provider');

        await admin('PUT', `/bots/${bot.botId}/models`, { best: 'declared:big', fast: 'declared:small' });
        // A key the provider refuses: the call fails, and neither key is in the error.
        const rekeyed = await admin('PUT', '/llm-providers/declared', { apiKey: WRONG_KEY });
        assert.equal(rekeyed.status, 200);
        assert.equal((rekeyed.body.provider as { hasApiKey: boolean }).hasApiKey, true);
        const failed = await rawRuntime(
          t,
          bot,
          'POST',
          '/v2/cognitive/generate-text',
          ask('wrong key', 'fast'),
        );
        seen.push(JSON.stringify(failed.body));
        assert.equal(failed.status, 502);
        assert.equal(lastCompletion(theirs).headers.authorization, `Bearer ${WRONG_KEY}`);

        assert.equal((await admin('DELETE', '/llm-providers/declared')).status, 200);
        const choices = await admin('GET', `/bots/${bot.botId}/models`);
        assert.equal(choices.body.best, null);
        assert.equal(choices.body.fast, null);
        assert.equal(
          (await generate(bot, ask('after the delete', 'fast'))).metadata.model,
          'default:test-fast',
        );
        assert.equal((await admin('DELETE', '/llm-providers/declared')).status, 404);
      });

      test('a developer reads the providers and chooses a bot’s models; only administrators manage providers', async () => {
        const email = `developer-${Date.now()}@example.com`;
        await t.client().createWorkspaceMember({ email, role: 'developer' });
        const account = await t.server.domain.accounts.findByEmail(email);
        assert.ok(account);
        const token = (await t.server.domain.accounts.createToken(account.id, 'developer')).value;
        assert.equal((await admin('GET', '/llm-providers', undefined, { token })).status, 200);
        const made = await admin(
          'POST',
          '/llm-providers',
          { name: 'devs', baseUrl: theirs.url, models: ['x'] },
          { token },
        );
        assert.equal(made.status, 403);
        assert.equal((await admin('DELETE', '/llm-providers/mine', undefined, { token })).status, 403);
        const chosen = await admin('PUT', `/bots/${bot.botId}/models`, { fast: 'mine:small' }, { token });
        assert.equal(chosen.status, 200, chosen.text);
        await admin('PUT', `/bots/${bot.botId}/models`, { fast: null });
      });

      test('the requests of docs/llm.md do what the page says (its provider here: a model server of the tests)', async () => {
        const team = await startModelServer({ models: ['team-large', 'team-small'], apiKey: 'sk-team-key' });
        try {
          const docsBot = await createTestBot(t, 'docs-bot');
          const body = { ...(await docsJson('createLlmProvider body')), baseUrl: team.url };
          const made = await admin('POST', '/llm-providers', body);
          assert.equal(made.status, 201, made.text);
          const chosen = await admin(
            'PUT',
            `/bots/${docsBot.botId}/models`,
            await docsJson('updateBotModels body'),
          );
          assert.equal(chosen.status, 200, chosen.text);
          const answer = await generate(docsBot, { messages: [{ role: 'user', content: 'as documented' }] });
          assert.equal(answer.metadata.model, 'team:team-large');
          assert.ok(answer.metadata.cost > 0, 'at its price');
          assert.equal(lastCompletion(team).headers.authorization, 'Bearer sk-team-key');
          assert.equal((await admin('DELETE', '/llm-providers/team')).status, 200);
        } finally {
          await team.close();
        }
      });

      test('no answer of the suite carried a provider’s key', () => {
        assert.ok(seen.length > 30, `answers looked at: ${seen.length}`);
        for (const text of seen) {
          assert.doesNotMatch(text, new RegExp(THEIR_KEY));
          assert.doesNotMatch(text, new RegExp(WRONG_KEY));
        }
      });
    },
  );

  describe(
    `a workspace's provider must be on the public internet unless the operator allows it (${store.name})`,
    { skip: store.skip },
    () => {
      let theirs: ModelServer;
      let t: TestServer;
      before(async () => {
        theirs = await startModelServer({ models: ['big'] });
        // No provider of the server's: the workspace's own is the only one.
        t = await startTestServer(store);
      });
      after(async () => {
        await t?.close();
        await theirs?.close();
      });

      const create = async (body: unknown) => {
        const res = await fetch(`${t.url}/v1/admin/llm-providers`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${t.token}`,
            'x-workspace-id': t.workspaceId,
            'content-type': 'application/json',
          },
          body: JSON.stringify(body),
        });
        return { status: res.status, body: (await res.json()) as { message?: string } };
      };

      test('loopback and private addresses are refused when set, and names that resolve to them when called', async () => {
        const port = new URL(theirs.url).port;
        for (const host of ['127.0.0.1', '[::1]', '10.0.0.5', '169.254.169.254', '[::ffff:127.0.0.1]']) {
          const refused = await create({
            name: 'local',
            baseUrl: `http://${host}:${port}/v1`,
            models: ['big'],
          });
          assert.equal(refused.status, 400, host);
          assert.match(String(refused.body.message), /PARLEY_LLM_PRIVATE_TARGETS is off/, host);
        }
        const unread = await create({ name: 'local', baseUrl: `http://localhost:${port}/v1` });
        assert.equal(unread.status, 400);
        assert.match(String(unread.body.message), /not a public address/);

        const bot = await createTestBot(t, 'local-bot');
        const before = (await t.client().getBot({ id: bot.botId })).bot.integrations.llm;
        assert.equal(before?.status, 'registration_failed', 'no provider at all');
        const declared = await create({
          name: 'local',
          baseUrl: `http://localhost:${port}/v1`,
          models: ['big'],
        });
        assert.equal(declared.status, 201, 'a name is checked when it is connected to');
        const registered = (await t.client().getBot({ id: bot.botId })).bot.integrations.llm;
        assert.equal(registered?.status, 'registered', 'the workspace’s provider answers its bots');
        const called = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', {
          messages: [{ role: 'user', content: 'to loopback' }],
          model: 'local:big',
        });
        assert.equal(called.status, 502, JSON.stringify(called.body));
        assert.match(JSON.stringify(called.body), /not a public address/);
        assert.equal(theirs.requests.length, 0, 'nothing reached the loopback server');
      });
    },
  );
}
