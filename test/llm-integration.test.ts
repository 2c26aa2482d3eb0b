// The built-in LLM integration, "path A" of the hosted platform's model calls: `callAction` of
// `llm:generateContent` and `llm:listLanguageModels` through the official client, in the `llm`
// interface's shapes, answered by the operator's provider (the project's test model server).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { isApiError } from '@botpress/client';
import { Cognitive } from '@botpress/cognitive';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

for (const store of await testStores()) {
  describe(`the built-in llm integration (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      models = await startModelServer();
      t = await startTestServer(store, parleySettings(models));
      bot = await createTestBot(t, 'llm-bot');
    });
    after(async () => {
      await t?.close();
      await models?.close();
    });

    test('getBot lists it as a registered integration, beside the chat channel', async () => {
      const { bot: read } = await t.client().getBot({ id: bot.botId });
      const llm = read.integrations.llm;
      assert.ok(llm, 'the llm integration is listed');
      assert.equal(llm.name, 'llm');
      assert.equal(llm.status, 'registered');
      assert.equal(llm.version, '11.0.0');
      assert.ok(read.integrations.chat, 'the chat channel is still there');
    });

    test('listLanguageModels lists the provider’s models, best first, with the tags the hosted client ranks by', async () => {
      const { output } = await bot.client.callAction({ type: 'llm:listLanguageModels', input: {} });
      const list: unknown = output.models;
      assert.ok(Array.isArray(list));
      const ids = list.map((m: { id: string }) => m.id);
      assert.deepEqual(ids.slice(0, 2), ['test-best', 'test-fast']);
      assert.ok(ids.includes('test-embeddings'));
      const best = list.find((m: { id: string }) => m.id === 'test-best') as {
        tags: string[];
        input: { maxTokens: number };
      };
      assert.deepEqual(best.tags, ['recommended', 'general-purpose']);
      assert.ok(best.input.maxTokens > 0);
    });

    test('generateContent answers in the interface’s shape: choices, stop reason, usage and cost', async () => {
      const { output, meta } = await bot.client.callAction({
        type: 'llm:generateContent',
        input: {
          model: { id: 'test-fast' },
          systemPrompt: 'Answer in one word.',
          messages: [{ role: 'user', content: 'Say hi' }],
          temperature: 0,
        },
      });
      assert.equal(meta.cached, false);
      assert.equal(output.provider, 'default');
      assert.equal(output.model, 'default:test-fast');
      assert.match(String(output.id), /^llm_/);
      const [choice] = output.choices as {
        content: string;
        role: string;
        index: number;
        stopReason: string;
      }[];
      assert.deepEqual(
        {
          content: choice?.content,
          role: choice?.role,
          index: choice?.index,
          stopReason: choice?.stopReason,
        },
        { content: 'echo: Say hi', role: 'assistant', index: 0, stopReason: 'stop' },
      );
      const usage = output.usage as { inputTokens: number; outputTokens: number };
      assert.ok(usage.inputTokens > 0 && usage.outputTokens > 0);
      assert.deepEqual(output.botpress, { cost: 0 });

      models.replyWhen('look it up', { toolCalls: [{ name: 'lookup', arguments: { q: 'order 42' } }] });
      const withTools = await bot.client.callAction({
        type: 'llm:generateContent',
        input: {
          messages: [{ role: 'user', content: 'please look it up' }],
          tools: [{ type: 'function', function: { name: 'lookup', argumentsSchema: { type: 'object' } } }],
          toolChoice: { type: 'any' },
        },
      });
      const [toolChoice] = withTools.output.choices as {
        type: string;
        stopReason: string;
        toolCalls: { type: string; function: { name: string; arguments: unknown } }[];
      }[];
      assert.equal(toolChoice?.type, 'tool_calls');
      assert.equal(toolChoice?.stopReason, 'tool_calls');
      assert.deepEqual(toolChoice?.toolCalls[0]?.function, { name: 'lookup', arguments: { q: 'order 42' } });
      assert.equal(toolChoice?.toolCalls[0]?.type, 'function');
    });

    test('a model the provider does not serve is the error the hosted client falls back on; bad input names the field', async () => {
      const missing = await bot.client
        .callAction({
          type: 'llm:generateContent',
          input: { model: { id: 'no-such-model' }, messages: [{ role: 'user', content: 'x' }] },
        })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(isApiError(missing));
      assert.equal(missing.type, 'InvalidDataFormat');
      assert.match(missing.message, /data\/model\/id/);

      models.fail({ kind: 'status', status: 503 });
      const down = await bot.client
        .callAction({ type: 'llm:generateContent', input: { messages: [{ role: 'user', content: 'down' }] } })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(isApiError(down));
      assert.deepEqual(down.metadata, { subtype: 'UPSTREAM_PROVIDER_FAILED' });

      const bad = await bot.client
        .callAction({ type: 'llm:generateContent', input: { messages: [{ role: 'robot', content: 'x' }] } })
        .then(
          () => undefined,
          (err: unknown) => err,
        );
      assert.ok(isApiError(bad));
      assert.equal(bad.type, 'InvalidPayload');
      assert.match(bad.message, /input\/messages\/0\/role/);
    });
  });

  describe(`the llm integration under other aliases (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      models = await startModelServer();
      t = await startTestServer(store, parleySettings(models));
      bot = await createTestBot(t, 'openai-bot');
      // As the hosted API takes an alias: the record's key, naming the integration by `integrationId`;
      // the body docs/llm.md shows.
      const block = await docsBlock('docs/llm.md', 'llm alias');
      const { integrations } = JSON.parse(block) as {
        integrations: Record<string, { integrationId: string }>;
      };
      await t.client().updateBot({ id: bot.botId, integrations });
    });
    after(async () => {
      await t?.close();
      await models?.close();
    });

    const failure = (call: Promise<unknown>) =>
      call.then(
        () => assert.fail('the call was expected to fail'),
        (err: unknown) => {
          assert.ok(isApiError(err));
          return err;
        },
      );

    test('getBot lists it under the alias, named by it, registered, beside llm', async () => {
      const { bot: read } = await bot.client.getBot({ id: bot.botId });
      const { openai, llm } = read.integrations;
      assert.ok(openai && llm);
      assert.deepEqual(
        { id: openai.id, name: openai.name, version: openai.version, status: openai.status },
        { id: 'llm', name: 'openai', version: '11.0.0', status: 'registered' },
      );
      assert.equal(openai.enabled, true);
      assert.equal(llm.name, 'llm');
    });

    test('code written for the hosted openai integration calls the provider unchanged', async () => {
      const { output } = await bot.client.callAction({
        type: 'openai:generateContent',
        input: { model: { id: 'gpt-4o-mini' }, messages: [{ role: 'user', content: 'hosted model' }] },
      });
      assert.match(String(output.id), /^openai_/);
      assert.equal(output.model, 'default:test-best', 'a hosted model id is answered by best');
      assert.equal((output.choices as { content: string }[])[0]?.content, 'echo: hosted model');
      const served = await bot.client.callAction({
        type: 'openai:generateContent',
        input: { model: { id: 'test-fast' }, messages: [{ role: 'user', content: 'served model' }] },
      });
      assert.equal(served.output.model, 'default:test-fast', 'a model the provider serves is that model');
      const listed = await bot.client.callAction({ type: 'openai:listLanguageModels', input: {} });
      assert.ok(Array.isArray(listed.output.models) && listed.output.models.length >= 2);

      const other = await failure(
        bot.client.callAction({
          type: 'anthropic:generateContent',
          input: { messages: [{ role: 'user', content: 'x' }] },
        }),
      );
      assert.equal(other.type, 'ResourceNotFound', 'an alias the bot did not install');
    });

    test('@botpress/cognitive’s default mode, with the bot’s own key, picks the alias by its name', async () => {
      const cognitive = new Cognitive({ client: Object.assign(bot.client, { botId: bot.botId }) });
      models.reply('from the alias');
      const { output, meta } = await cognitive.generateContent({
        model: 'openai:test-fast',
        messages: [{ role: 'user', content: 'which integration?' }],
      });
      assert.equal(output.choices[0]?.content, 'from the alias');
      assert.deepEqual(meta.model, { integration: 'openai', model: 'test-fast' });
      const details = await cognitive.getModelDetails('openai:test-best');
      assert.equal(details.integration, 'openai');
    });

    test('an alias is disabled, then removed; the built-in names and bad aliases are refused', async () => {
      const admin = t.client();
      const other = await createTestBot(t, 'alias-changes-bot');
      await admin.updateBot({ id: other.botId, integrations: { anthropic: { integrationId: 'llm' } } });
      await admin.updateBot({ id: other.botId, integrations: { anthropic: { enabled: false } } });
      const { bot: disabled } = await admin.getBot({ id: other.botId });
      assert.equal(disabled.integrations.anthropic?.enabled, false);
      const off = await failure(
        other.client.callAction({
          type: 'anthropic:generateContent',
          input: { messages: [{ role: 'user', content: 'x' }] },
        }),
      );
      assert.equal(off.type, 'ResourceNotFound');
      // A bp deploy sends null for every integration its project does not declare: the alias stays.
      await admin.updateBot({
        id: other.botId,
        code: 'module.exports = { handler: async () => ({ status: 200 }) };',
        integrations: { anthropic: null },
      });
      const { bot: deployed } = await admin.getBot({ id: other.botId });
      assert.equal(deployed.integrations.anthropic?.name, 'anthropic');
      await admin.updateBot({ id: other.botId, integrations: { anthropic: null } });
      const { bot: removed } = await admin.getBot({ id: other.botId });
      assert.equal(removed.integrations.anthropic, undefined);
      assert.ok(removed.integrations.llm, 'llm itself stays');

      // `llm` under its own name is the built-in itself, which a bot keyed by alias may name: nothing changes.
      const cli7 = t.client({ headers: { 'x-multiple-integrations': 'true' } });
      const same = await cli7.updateBot({ id: other.botId, integrations: { llm: { integrationId: 'llm' } } });
      assert.ok(same.bot.integrations.llm);
      for (const alias of ['chat', 'Not An Alias']) {
        const refused = await failure(
          admin.updateBot({ id: other.botId, integrations: { [alias]: { integrationId: 'llm' } } }),
        );
        assert.equal(refused.type, 'InvalidPayload', alias);
        assert.match(refused.message, new RegExp(`integrations\\.${alias}`), alias);
      }
    });
  });

  describe(`the built-in llm integration without a provider (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'no-llm-bot');
    });
    after(() => t?.close());

    test('it is listed as not registered, saying why, and its actions say which settings to set', async () => {
      const { bot: read } = await t.client().getBot({ id: bot.botId });
      assert.equal(read.integrations.llm?.status, 'registration_failed');
      assert.match(read.integrations.llm?.statusReason ?? '', /LLM not configured/);
      const err = await bot.client
        .callAction({ type: 'llm:generateContent', input: { messages: [{ role: 'user', content: 'x' }] } })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      assert.ok(isApiError(err));
      assert.match(err.message, /PARLEY_LLM_BASE_URL/);
    });
  });
}
