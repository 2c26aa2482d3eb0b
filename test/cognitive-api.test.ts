// The Cognitive API (`/v2/cognitive/*`), "path B" of the hosted platform's model calls, answered by the
// operator's OpenAI-compatible provider (here the project's test model server): both request shapes,
// streaming as NDJSON, fallbacks, caching and idempotency, errors the clients retry or fall back on,
// and a provider's key kept out of every answer.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, test } from 'node:test';
import { parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { assertErrorBody, createTestBot, rawRuntime } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';
import { lockedFromOutside } from './helpers/held-rows.ts';

const API_KEY = 'sk-test-cognitive-secret-0123456789';

interface Generation {
  output: string;
  toolCalls?: { id: string; name: string; input: Record<string, unknown> }[];
  metadata: {
    provider: string;
    model: string;
    usage: { inputTokens: number; outputTokens: number; inputCost: number; outputCost: number };
    cost: number;
    cached: boolean;
    stopReason: string;
    warnings?: { type: string; message: string }[];
    fallbackPath?: string[];
    requestId?: string;
    latency: number;
  };
}

function isGeneration(value: unknown): value is Generation {
  return typeof value === 'object' && value !== null && 'output' in value && 'metadata' in value;
}

async function generate(t: TestServer, bot: TestBot, body: unknown): Promise<Generation> {
  const res = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.ok(isGeneration(res.body));
  return res.body;
}

/** The body of the last chat completion the provider received. */
function lastCompletion(models: ModelServer): Record<string, unknown> {
  const calls = models.requests.filter((r) => r.path === '/v1/chat/completions');
  const body = calls.at(-1)?.body;
  assert.ok(body && typeof body === 'object', 'the provider received a chat completion');
  return { ...body };
}

/** Reads an NDJSON answer line by line, with the time each line arrived. */
async function readLines(res: Response): Promise<{ line: Record<string, unknown>; at: number }[]> {
  assert.ok(res.body);
  const lines: { line: Record<string, unknown>; at: number }[] = [];
  const decoder = new TextDecoder();
  let buffered = '';
  const reader = res.body.getReader();
  for (;;) {
    const read: { done: true; value?: undefined } | { done: false; value: Uint8Array } = await reader.read();
    if (read.done) break;
    buffered += decoder.decode(read.value, { stream: true });
    let newline: number;
    while ((newline = buffered.indexOf('\n')) >= 0) {
      const text = buffered.slice(0, newline);
      buffered = buffered.slice(newline + 1);
      if (text.trim() !== '')
        lines.push({ line: JSON.parse(text) as Record<string, unknown>, at: performance.now() });
    }
  }
  assert.equal(buffered.trim(), '', 'the answer ends with a newline');
  return lines;
}

function streamRequest(t: TestServer, bot: TestBot, body: unknown, signal?: AbortSignal): Promise<Response> {
  return fetch(`${t.url}/v2/cognitive/generate-text-stream`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${bot.key}`,
      'x-bot-id': bot.botId,
      'content-type': 'application/json',
    },
    body: JSON.stringify(body),
    ...(signal && { signal }),
  });
}

for (const store of await testStores()) {
  describe(`the Cognitive API (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      models = await startModelServer({ apiKey: API_KEY });
      t = await startTestServer(store, {
        ...parleySettings(models),
        llmApiKey: API_KEY,
        llmTimeoutSeconds: '2',
        llmPrices: JSON.stringify({ 'default:test-best': { input: 1, output: 2 } }),
      });
      bot = await createTestBot(t, 'cognitive-bot');
    });
    after(async () => {
      await t?.close();
      await models?.close();
    });

    test('generate-text answers the model’s text, with usage, cost and the model that answered', async () => {
      const answer = await generate(t, bot, {
        messages: [{ role: 'user', content: 'hello there' }],
        model: 'best',
        options: { skipCache: true },
      });
      assert.equal(answer.output, 'echo: hello there');
      assert.equal(answer.metadata.provider, 'default');
      assert.equal(answer.metadata.model, 'default:test-best');
      assert.equal(answer.metadata.stopReason, 'stop');
      assert.equal(answer.metadata.cached, false);
      assert.ok(answer.metadata.usage.inputTokens > 0 && answer.metadata.usage.outputTokens > 0);
      const { inputTokens, outputTokens } = answer.metadata.usage;
      const priced = (inputTokens * 1 + outputTokens * 2) / 1e6;
      assert.ok(
        Math.abs(answer.metadata.cost - priced) < 1e-12,
        `priced per million tokens: ${answer.metadata.cost}`,
      );
      assert.equal(lastCompletion(models).model, 'test-best');
      const headers = models.requests.at(-1)?.headers;
      assert.equal(headers?.authorization, `Bearer ${API_KEY}`, 'the key goes to the provider');

      const fast = await generate(t, bot, { messages: [{ role: 'user', content: 'quick' }], model: 'fast' });
      assert.equal(fast.metadata.model, 'default:test-fast');
      assert.equal(fast.metadata.cost, 0, 'a model without a price costs nothing');
      const named = await generate(t, bot, {
        messages: [{ role: 'user', content: 'named' }],
        model: 'default:test-fast',
      });
      assert.equal(named.metadata.model, 'default:test-fast');
      const absent = await generate(t, bot, { messages: [{ role: 'user', content: 'no model' }] });
      assert.equal(absent.metadata.model, 'default:test-best', 'no model is best');
    });

    test('the v2 shape’s fields reach the provider as OpenAI’s: stop, tokens, temperature, JSON, tools', async () => {
      const answer = await generate(t, bot, {
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'count to ten' },
        ],
        maxTokens: 3,
        temperature: 0.2,
        stopSequences: ['■fn_end'],
        responseFormat: 'text',
        reasoningEffort: 'high',
        search: true,
        options: { skipCache: true },
      });
      const sent = lastCompletion(models);
      assert.deepEqual(sent.stop, ['■fn_end']);
      assert.equal(sent.max_tokens, 3);
      assert.equal(sent.temperature, 0.2);
      assert.deepEqual(sent.messages, [
        { role: 'system', content: 'be brief' },
        { role: 'user', content: 'count to ten' },
      ]);
      assert.equal(answer.metadata.stopReason, 'max_tokens');
      const ignored = (answer.metadata.warnings ?? []).filter((w) => w.type === 'parameter_ignored');
      assert.deepEqual(
        ignored.map((w) => w.message.split(' ')[0]),
        ['reasoningEffort', 'search'],
        'what the provider is not sent is reported',
      );

      models.replyWhen('weather in Paris', {
        toolCalls: [{ name: 'getWeather', arguments: { city: 'Paris' } }],
      });
      const withTools = await generate(t, bot, {
        messages: [{ role: 'user', content: 'the weather in Paris?' }],
        tools: [
          {
            name: 'getWeather',
            description: 'Weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' } } },
          },
        ],
        toolControl: { mode: 'specific', toolName: 'getWeather' },
        responseFormat: 'json_object',
        options: { skipCache: true },
      });
      assert.deepEqual(lastCompletion(models).tool_choice, {
        type: 'function',
        function: { name: 'getWeather' },
      });
      assert.deepEqual(lastCompletion(models).response_format, { type: 'json_object' });
      assert.equal(withTools.metadata.stopReason, 'tool_calls');
      assert.equal(withTools.toolCalls?.length, 1);
      assert.equal(withTools.toolCalls?.[0]?.name, 'getWeather');
      assert.deepEqual(withTools.toolCalls?.[0]?.input, { city: 'Paris' });
      assert.equal(typeof withTools.toolCalls?.[0]?.id, 'string');
    });

    test('the legacy generateContent shape that cognitive 0.5.4 sends to v2 is accepted as well', async () => {
      const answer = await generate(t, bot, {
        model: { id: 'fast' },
        systemPrompt: 'You are terse.',
        messages: [
          { role: 'user', type: 'text', content: 'what is 2+2?' },
          {
            role: 'assistant',
            type: 'tool_calls',
            content: null,
            toolCalls: [
              { id: 'call_1', type: 'function', function: { name: 'add', arguments: { a: 2, b: 2 } } },
            ],
          },
          { role: 'user', type: 'tool_result', toolResultCallId: 'call_1', content: '4' },
        ],
        tools: [{ type: 'function', function: { name: 'add', argumentsSchema: { type: 'object' } } }],
        toolChoice: { type: 'auto' },
        topP: 0.9,
        userId: 'user_42',
        responseFormat: 'json_object',
        signal: {},
        meta: { promptSource: 'cards/ai-task', integrationName: 'zai' },
        options: { skipCache: true },
      });
      assert.equal(answer.metadata.model, 'default:test-fast');
      const sent = lastCompletion(models);
      assert.deepEqual(sent.messages, [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'what is 2+2?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'add', arguments: '{"a":2,"b":2}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: '4' },
      ]);
      assert.deepEqual(sent.tools, [
        { type: 'function', function: { name: 'add', parameters: { type: 'object' } } },
      ]);
      assert.equal(sent.tool_choice, 'auto');
      assert.equal(sent.top_p, 0.9);
      assert.equal(sent.user, 'user_42');
    });

    test('a fallback array: a model that is not served or fails passes the request to the next', async () => {
      const answer = await generate(t, bot, {
        messages: [{ role: 'user', content: 'fallback please' }],
        model: ['default:no-such-model', 'fast'],
        options: { skipCache: true },
      });
      assert.equal(answer.metadata.model, 'default:test-fast');
      assert.deepEqual(answer.metadata.fallbackPath, ['default:no-such-model']);
      assert.ok(answer.metadata.warnings?.some((w) => w.type === 'fallback_used'));

      models.fail({ kind: 'status', status: 503 }, { model: 'test-best' });
      const after503 = await generate(t, bot, {
        messages: [{ role: 'user', content: 'overloaded' }],
        model: ['best', 'fast'],
        options: { skipCache: true },
      });
      assert.equal(after503.metadata.model, 'default:test-fast');
      assert.deepEqual(after503.metadata.fallbackPath, ['default:test-best']);

      const hosted = await generate(t, bot, {
        messages: [{ role: 'user', content: 'written for the hosted platform' }],
        model: 'openai:gpt-4o-mini-2024-07-18',
        options: { skipCache: true },
      });
      assert.equal(
        hosted.metadata.model,
        'default:test-best',
        'another provider’s model is answered by best',
      );
      assert.ok(
        hosted.metadata.warnings?.some(
          (w) => w.type === 'fallback_used' && w.message.includes('openai:gpt-4o'),
        ),
      );
    });

    test('failures become the errors the clients retry or fall back on, never with the provider’s key', async () => {
      models.fail({ kind: 'status', status: 503 }, { times: 2 });
      const down = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', {
        messages: [{ role: 'user', content: 'all down' }],
        model: ['best', 'fast'],
        options: { skipCache: true },
      });
      assertErrorBody(down, 502, 'Unknown');
      assert.deepEqual(Reflect.get(Object(down.body), 'metadata'), { subtype: 'UPSTREAM_PROVIDER_FAILED' });

      models.fail({ kind: 'status', status: 429, retryAfterSeconds: 7 });
      const limited = await fetch(`${t.url}/v2/cognitive/generate-text`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${bot.key}`,
          'x-bot-id': bot.botId,
          'content-type': 'application/json',
        },
        body: JSON.stringify({
          messages: [{ role: 'user', content: 'too many' }],
          options: { skipCache: true },
        }),
      });
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '7');
      assert.equal(Reflect.get(Object(await limited.json()), 'type'), 'RateLimited');

      models.fail({ kind: 'hang' });
      const started = Date.now();
      const slow = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', {
        messages: [{ role: 'user', content: 'hang' }],
        options: { skipCache: true },
      });
      assertErrorBody(slow, 504, 'OperationTimeout');
      assert.ok(Date.now() - started < 5_000, 'the deadline (2 s here) ends the call');

      models.fail({
        kind: 'status',
        status: 500,
        error: { message: `Incorrect API key provided: ${API_KEY}`, type: 'x' },
      });
      const echoed = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', {
        messages: [{ role: 'user', content: 'echo the key' }],
        options: { skipCache: true },
      });
      assert.equal(echoed.status, 502);
      assert.ok(!JSON.stringify(echoed.body).includes(API_KEY), 'the key is not repeated');
      assert.match(JSON.stringify(echoed.body), /\[redacted\]/);

      const invalid = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', { messages: 'hi' });
      assertErrorBody(invalid, 400, 'InvalidPayload');
      assert.match(String(Reflect.get(Object(invalid.body), 'message')), /messages/);
    });

    test('an identical request is answered from the cache; a request id is answered once', async () => {
      const body = { messages: [{ role: 'user', content: `cache me ${Date.now()}` }] };
      const calls = () => models.requests.filter((r) => r.path === '/v1/chat/completions').length;
      const before = calls();
      const first = await generate(t, bot, body);
      const second = await generate(t, bot, body);
      assert.equal(calls(), before + 1, 'the second was not sent to the provider');
      assert.equal(first.metadata.cached, false);
      assert.equal(second.metadata.cached, true);
      assert.equal(second.output, first.output);
      await generate(t, bot, { ...body, options: { skipCache: true } });
      assert.equal(calls(), before + 2, 'skipCache asks the provider again');

      models.reply('the one answer');
      const once = {
        messages: [{ role: 'user', content: 'idempotent' }],
        options: { skipCache: true, requestId: 'req-1' },
      };
      const a = await generate(t, bot, once);
      const b = await generate(t, bot, once);
      assert.equal(a.output, 'the one answer');
      assert.equal(b.output, 'the one answer');
      assert.equal(b.metadata.requestId, 'req-1');
      assert.equal(calls(), before + 3, 'the same request id is not sent twice');

      const other = await createTestBot(t, 'another-cognitive-bot');
      const theirs = await generate(t, other, once);
      assert.notEqual(theirs.output, 'the one answer', 'another bot’s request id is its own');
    });

    test('generate-text-stream writes NDJSON as the provider streams, and ends with the metadata', async () => {
      models.pace({ firstTokenDelayMs: 50, tokenDelayMs: 60 });
      models.reply('one two three four five');
      try {
        const started = performance.now();
        const res = await streamRequest(t, bot, {
          messages: [{ role: 'user', content: 'stream it' }],
          model: 'fast',
          stream: true,
          options: { skipCache: true },
        });
        assert.equal(res.status, 200);
        assert.match(res.headers.get('content-type') ?? '', /application\/x-ndjson/);
        const lines = await readLines(res);
        const text = lines.map(({ line }) => (typeof line.output === 'string' ? line.output : '')).join('');
        assert.equal(text, 'one two three four five');
        const last = lines.at(-1)?.line;
        assert.equal(last?.finished, true);
        const metadata = last?.metadata;
        assert.ok(metadata && typeof metadata === 'object');
        assert.equal(Reflect.get(metadata, 'model'), 'default:test-fast');
        assert.ok(typeof Reflect.get(metadata, 'ttft') === 'number');
        const firstLine = lines[0];
        assert.ok(firstLine && lines.length > 3, 'a line per token or so');
        assert.ok(
          firstLine.at - started < (last ? lines.at(-1)!.at - started : 0) - 150,
          'the first line came well before the last',
        );
        assert.ok(lines.every(({ line }) => typeof line.created === 'number'));
      } finally {
        models.pace({ firstTokenDelayMs: 0, tokenDelayMs: 0 });
      }
    });

    test(
      'a stream ends with its last chunk, its call recorded after it; getBotAnalytics counts it once the stream ended',
      { skip: store.name === 'postgres' ? false : 'the records are held back from outside with PostgreSQL' },
      async () => {
        const databaseUrl = t.settings.databaseUrl;
        assert.ok(databaseUrl);
        const recorded = await createTestBot(t, 'recorded-after-bot');
        const startDate = new Date(Date.now() - 60_000).toISOString();
        // From outside, the records of model calls are locked for writes (reads go on): a stream whose end
        // waited for its record would not end until the lock is released.
        await lockedFromOutside(databaseUrl, 'lock table llm_calls in exclusive mode', async (release) => {
          const res = await streamRequest(
            t,
            recorded,
            { messages: [{ role: 'user', content: 'recorded after' }], options: { skipCache: true } },
            AbortSignal.timeout(10_000),
          );
          assert.equal(res.status, 200);
          const lines = await readLines(res);
          assert.equal(lines.at(-1)?.line.finished, true, 'the whole answer, its record still waiting');
          const analytics = t.client().getBotAnalytics({
            id: recorded.botId,
            startDate,
            endDate: new Date(Date.now() + 60_000).toISOString(),
          });
          await sleep(200);
          await release();
          const { records } = await analytics;
          const calls = records.reduce((sum, r) => sum + r.llm.calls, 0);
          assert.equal(calls, 1, 'the read waited for the record under way');
        });
      },
    );

    test('after a stream’s last event its connection to the provider is kept, and the next request takes it', async () => {
      const streamOnce = async (content: string) => {
        const res = await streamRequest(t, bot, {
          messages: [{ role: 'user', content }],
          options: { skipCache: true },
        });
        assert.equal(res.status, 200);
        assert.equal((await readLines(res)).at(-1)?.line.finished, true);
        const upstream = models.requests.at(-1);
        assert.equal(await upstream?.settled, 'answered');
        return upstream?.connection;
      };
      const first = await streamOnce('one stream');
      const second = await streamOnce('the next stream');
      assert.ok(first !== undefined);
      assert.equal(second, first, 'the second stream came on the first one’s connection');
    });

    test('a kept connection the provider resets before answering is tried once more, on a new one', async () => {
      await generate(t, bot, { messages: [{ role: 'user', content: 'keeps a connection' }] });
      const kept = models.requests.at(-1)?.connection;
      models.fail({ kind: 'reset' }, { times: 1 });
      const answer = await generate(t, bot, { messages: [{ role: 'user', content: 'reset once' }] });
      assert.equal(answer.output, 'echo: reset once');
      const [reset, retried] = models.requests.slice(-2);
      assert.equal(reset?.connection, kept, 'the reset came on the kept connection');
      assert.equal(await reset?.settled, 'dropped');
      assert.notEqual(retried?.connection, kept);
      assert.equal(await retried?.settled, 'answered');
    });

    test('a stream client that goes away cancels the provider’s request; an error before the first token has its status', async () => {
      models.pace({ firstTokenDelayMs: 0, tokenDelayMs: 200 });
      try {
        const leaving = new AbortController();
        const res = await streamRequest(
          t,
          bot,
          { messages: [{ role: 'user', content: 'a long story' }], options: { skipCache: true } },
          leaving.signal,
        );
        assert.ok(res.body);
        const reader = res.body.getReader();
        await reader.read();
        const upstream = models.requests.at(-1);
        leaving.abort();
        assert.equal(await upstream?.settled, 'aborted', 'the provider saw the request end');
      } finally {
        models.pace({ firstTokenDelayMs: 0, tokenDelayMs: 0 });
      }

      models.fail({ kind: 'status', status: 503 }, { times: 1 });
      const refused = await streamRequest(t, bot, {
        messages: [{ role: 'user', content: 'down' }],
        model: 'best',
        options: { skipCache: true },
      });
      assert.equal(refused.status, 502);
      assert.equal(Reflect.get(Object(await refused.json()), 'type'), 'Unknown');
    });

    test('a provider that fails after the first tokens ends the stream abnormally, without its last line', async () => {
      models.fail({ kind: 'cut', afterChunks: 2 }, { times: 1 });
      const res = await streamRequest(t, bot, {
        messages: [{ role: 'user', content: 'a story cut short' }],
        options: { skipCache: true },
      });
      assert.equal(res.status, 200);
      assert.ok(res.body);
      const reader: ReadableStreamDefaultReader<Uint8Array> = res.body.getReader();
      const decoder = new TextDecoder();
      let text = '';
      const ending = await (async () => {
        for (;;) {
          const { done, value } = await reader.read();
          if (done) return 'ended';
          text += decoder.decode(value, { stream: true });
        }
      })().catch(() => 'broken');
      assert.equal(ending, 'broken', 'the answer is cut, not ended as if complete');
      const lines = text.split('\n').filter((line) => line !== '');
      assert.ok(lines.length >= 1, 'the tokens before the failure came through');
      assert.ok(
        lines.every((line) => Reflect.get(Object(JSON.parse(line)), 'finished') !== true),
        'no line says it is finished',
      );
      const after = await generate(t, bot, { messages: [{ role: 'user', content: 'again' }] });
      assert.ok(after.output.length > 0, 'the next call is answered');
    });

    test('the models are the provider’s, named default:<id>, with best and fast marked', async () => {
      const res = await rawRuntime(t, bot, 'GET', '/v2/cognitive/models');
      assert.equal(res.status, 200);
      const list: unknown = Reflect.get(Object(res.body), 'models');
      assert.ok(Array.isArray(list));
      const byId = new Map(list.map((m: { id: string; aliases?: string[] }) => [m.id, m]));
      assert.ok(byId.has('default:test-embeddings'), 'every model the provider lists');
      assert.deepEqual(byId.get('default:test-best')?.aliases, ['best', 'auto']);
      assert.deepEqual(byId.get('default:test-fast')?.aliases, ['fast']);
    });

    test('every call the provider answered or failed is in getBotAnalytics’ llm block; cached answers are not calls', async () => {
      const metered = await createTestBot(t, 'metered-bot');
      const startDate = new Date(Date.now() - 60_000).toISOString();
      const one = await generate(t, metered, { messages: [{ role: 'user', content: 'first call' }] });
      const two = await generate(t, metered, {
        messages: [{ role: 'user', content: 'second call' }],
        model: 'fast',
      });
      await generate(t, metered, { messages: [{ role: 'user', content: 'first call' }] });
      models.fail({ kind: 'status', status: 500 });
      const failed = await rawRuntime(t, metered, 'POST', '/v2/cognitive/generate-text', {
        messages: [{ role: 'user', content: 'failing call' }],
      });
      assert.equal(failed.status, 502);
      const { records } = await t.client().getBotAnalytics({
        id: metered.botId,
        startDate,
        endDate: new Date(Date.now() + 60_000).toISOString(),
      });
      const llm = records.map((r) => r.llm).find((block) => block.calls > 0);
      assert.ok(llm, 'a period with calls');
      assert.equal(llm.calls, 3, 'two answered, one failed; the cached answer is not a call');
      assert.equal(llm.errors, 1);
      assert.equal(llm.inputTokens, one.metadata.usage.inputTokens + two.metadata.usage.inputTokens);
      assert.equal(llm.outputTokens, one.metadata.usage.outputTokens + two.metadata.usage.outputTokens);
      assert.ok(Math.abs(llm.cost.sum - (one.metadata.cost + two.metadata.cost)) < 1e-12);
      assert.ok(llm.latency.max >= llm.latency.min && llm.latency.mean >= 0);
      assert.ok(llm.tokensPerSecond.mean > 0, 'the answered calls’ speed');
    });

    test('past its monthly AI spend limit, a workspace’s model calls are refused until the limit is raised', async () => {
      const admin = t.client();
      await admin.changeAISpendQuota({ monthlySpendingLimit: 0.000001 });
      try {
        // What the month's calls cost so far (the earlier tests') is past this limit already.
        const refused = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', {
          messages: [{ role: 'user', content: 'over the limit' }],
          options: { skipCache: true },
        });
        assertErrorBody(refused, 403, 'QuotaExceeded');
        assert.match(String(Reflect.get(Object(refused.body), 'message')), /AI spend limit/);
        const action = await rawRuntime(t, bot, 'POST', '/v1/chat/actions', {
          type: 'llm:generateContent',
          input: { messages: [{ role: 'user', content: 'over the limit too' }] },
        });
        assertErrorBody(action, 403, 'QuotaExceeded');
      } finally {
        await admin.changeAISpendQuota({ monthlySpendingLimit: 1_000 });
      }
      await generate(t, bot, { messages: [{ role: 'user', content: 'under the limit again' }] });
      const viewer = await rawRuntime(t, bot, 'PUT', '/v1/admin/quotas/ai-spend', {
        monthlySpendingLimit: 5,
      });
      assert.equal(viewer.status, 401, 'a bot cannot change its workspace’s limit');
    });

    test('the request of docs/llm.md is answered as the page says', async () => {
      const block = await docsBlock('docs/llm.md', 'generate-text request');
      const answer = await generate(t, bot, JSON.parse(block));
      assert.equal(answer.metadata.model, 'default:test-best');
      assert.equal(answer.output, 'echo: What is Parley?');
      assert.equal(answer.metadata.requestId, 'faq-42');
    });

    test('the Cognitive API wants a bot’s credentials, like the Runtime API', async () => {
      const res = await fetch(`${t.url}/v2/cognitive/generate-text`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ messages: [{ role: 'user', content: 'hi' }] }),
      });
      assert.equal(res.status, 401);
    });
  });

  describe(`the Cognitive API without a provider (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'no-llm-bot');
    });
    after(() => t?.close());

    test('a model call says that no model is configured, and which settings to set', async () => {
      const res = await rawRuntime(t, bot, 'POST', '/v2/cognitive/generate-text', {
        messages: [{ role: 'user', content: 'hi' }],
      });
      assertErrorBody(res, 400, 'Runtime');
      assert.match(
        String(Reflect.get(Object(res.body), 'message')),
        /LLM not configured.*PARLEY_LLM_BASE_URL/,
      );
    });
  });
}
