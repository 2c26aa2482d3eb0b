// The test model server (test/helpers/model-server.ts) behaves as an OpenAI-compatible endpoint does,
// so that the LLM gateway's suites can trust it: driven here with plain fetch (the `openai` package is
// not among the dependencies).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { AUDIO_BYTES_PER_SECOND, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { similarity } from './helpers/model-embeddings.ts';
import { MultipartForm } from './helpers/model-multipart.ts';
import { parseSseBlocks } from './helpers/sse.ts';

interface Answer {
  status: number;
  headers: Headers;
  body: unknown;
}

interface ChatCompletion {
  id: string;
  object: string;
  model: string;
  choices: {
    index: number;
    message: {
      role: string;
      content: string | null;
      refusal: string | null;
      tool_calls?: { id: string; type: string; function: { name: string; arguments: string } }[];
    };
    finish_reason: string;
  }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

interface ChunkDelta {
  role?: string;
  content?: string;
  refusal?: string;
  tool_calls?: {
    index: number;
    id?: string;
    type?: string;
    function: { name?: string; arguments: string };
  }[];
}

interface Chunk {
  id: string;
  object: string;
  choices: { index: number; delta: ChunkDelta; finish_reason: string | null }[];
  usage?: ChatCompletion['usage'] | null;
}

interface Embeddings {
  object: string;
  data: { object: string; index: number; embedding: number[] | string }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

async function call(
  server: ModelServer,
  path: string,
  body?: unknown,
  init: { headers?: Record<string, string>; signal?: AbortSignal } = {},
): Promise<Answer> {
  const response = await fetch(`${server.url}${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { ...(body !== undefined && { 'content-type': 'application/json' }), ...init.headers },
    ...(body !== undefined && { body: JSON.stringify(body) }),
    ...(init.signal && { signal: init.signal }),
  });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}

async function chat(server: ModelServer, body: Record<string, unknown>): Promise<ChatCompletion> {
  const answer = await call(server, '/chat/completions', { model: 'test-best', ...body });
  assert.equal(answer.status, 200, JSON.stringify(answer.body));
  return answer.body as ChatCompletion;
}

function say(text: string) {
  return { messages: [{ role: 'user', content: text }] };
}

/** A body's text as it arrives. */
async function* textOf(body: ReadableStream<Uint8Array>): AsyncGenerator<string> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  for (let read = await reader.read(); !read.done; read = await reader.read()) {
    yield decoder.decode(read.value, { stream: true });
  }
}

/** The chunks of a stream, each with when it arrived (ms after the request), and whether `[DONE]` came. */
async function stream(
  server: ModelServer,
  body: Record<string, unknown>,
): Promise<{ chunks: Chunk[]; arrivals: number[]; done: boolean }> {
  const started = performance.now();
  const response = await fetch(`${server.url}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'test-best', stream: true, ...body }),
  });
  assert.equal(response.status, 200);
  assert.equal(response.headers.get('content-type'), 'text/event-stream');
  assert.ok(response.body);
  const chunks: Chunk[] = [];
  const arrivals: number[] = [];
  let done = false;
  let pending = '';
  for await (const text of textOf(response.body)) {
    const parsed = parseSseBlocks(pending + text);
    pending = parsed.rest;
    for (const frame of parsed.frames) {
      if (frame.data === '[DONE]') done = true;
      else {
        chunks.push(JSON.parse(frame.data) as Chunk);
        arrivals.push(performance.now() - started);
      }
    }
  }
  return { chunks, arrivals, done };
}

function streamedText(chunks: Chunk[]): string {
  return chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
}

function errorOf(answer: Answer): { message: string; type: string; param: unknown; code: unknown } {
  const body = answer.body as { error: { message: string; type: string; param: unknown; code: unknown } };
  assert.equal(typeof body.error.message, 'string', `an OpenAI error body: ${JSON.stringify(answer.body)}`);
  assert.deepEqual(Object.keys(body.error).sort(), ['code', 'message', 'param', 'type']);
  return body.error;
}

describe('the test model server', () => {
  let server: ModelServer;
  before(async () => {
    server = await startModelServer({ transcript: 'hello from the audio' });
  });
  after(() => server.close());

  test('lists the models it serves, and refuses a model it does not serve', async () => {
    const list = await call(server, '/models');
    assert.equal(list.status, 200);
    assert.deepEqual(list.body, {
      object: 'list',
      data: ['test-best', 'test-fast', 'test-embeddings', 'test-transcribe'].map((id) => ({
        id,
        object: 'model',
        created: 0,
        owned_by: 'parley-tests',
      })),
    });
    assert.equal((await call(server, '/models/test-fast')).status, 200);
    const missing = await call(server, '/chat/completions', { model: 'gpt-nothing', ...say('hi') });
    assert.equal(missing.status, 404);
    assert.equal(errorOf(missing).code, 'model_not_found');
    const unknownRoute = await call(server, '/completions', { model: 'test-best', prompt: 'hi' });
    assert.equal(unknownRoute.status, 404);
    assert.equal(errorOf(unknownRoute).type, 'invalid_request_error');
  });

  test('echoes the last user text by default, and counts words and punctuation as tokens', async () => {
    const completion = await chat(server, {
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'first' },
        { role: 'assistant', content: 'ok' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Hello, world!' },
            { type: 'image_url', image_url: { url: 'x' } },
          ],
        },
      ],
      temperature: 0.2,
      reasoning_effort: 'low',
      n: 3,
    });
    assert.equal(completion.object, 'chat.completion');
    assert.match(completion.id, /^chatcmpl-\d+$/);
    assert.equal(completion.model, 'test-best');
    assert.equal(completion.choices.length, 1, 'n is ignored');
    assert.deepEqual(completion.choices[0]?.message, {
      role: 'assistant',
      content: 'echo: Hello, world!',
      refusal: null,
    });
    assert.equal(completion.choices[0]?.finish_reason, 'stop');
    // Prompt: "Be brief." 3 + "first" 1 + "ok" 1 + "Hello, world!" 4; completion: "echo: Hello, world!" 6.
    assert.deepEqual(completion.usage, { prompt_tokens: 9, completion_tokens: 6, total_tokens: 15 });
    const received = server.requests.at(-1);
    assert.equal(received?.path, '/v1/chat/completions');
    assert.equal((received?.body as { reasoning_effort: string }).reasoning_effort, 'low');
  });

  test('reads a conversation with tool calls and their results, counting them in the prompt', async () => {
    const completion = await chat(server, {
      messages: [
        { role: 'developer', content: 'Use tools.' },
        { role: 'user', content: 'weather in Paris?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            {
              id: 'call_a',
              type: 'function',
              function: { name: 'getWeather', arguments: '{"city":"Paris"}' },
            },
          ],
        },
        { role: 'tool', tool_call_id: 'call_a', content: 'sunny' },
      ],
    });
    // "Use tools." 3 + "weather in Paris?" 4 + getWeather 1 + {"city":"Paris"} 9 + "sunny" 1.
    assert.equal(completion.usage.prompt_tokens, 18);
    assert.equal(completion.choices[0]?.message.content, 'echo: weather in Paris?');
    const toolWithoutId = await call(server, '/chat/completions', {
      model: 'test-best',
      messages: [{ role: 'tool', content: 'sunny' }],
    });
    assert.equal(toolWithoutId.status, 400);
  });

  test('max_tokens and max_completion_tokens cut the reply with finish_reason length', async () => {
    server.reply('one two three four five', 'one two three four five');
    const byMaxTokens = await chat(server, { ...say('count'), max_tokens: 3 });
    assert.equal(byMaxTokens.choices[0]?.message.content, 'one two three');
    assert.equal(byMaxTokens.choices[0]?.finish_reason, 'length');
    assert.equal(byMaxTokens.usage.completion_tokens, 3);
    const byCompletionTokens = await chat(server, {
      ...say('count'),
      max_completion_tokens: 2,
      max_tokens: 9,
    });
    assert.equal(byCompletionTokens.choices[0]?.message.content, 'one two');
  });

  test('stop cuts before the first stop text, as a string or a list', async () => {
    server.reply('const a = 1;■fn_end more', 'alpha END beta NO_MORE gamma');
    const single = await chat(server, { ...say('code'), stop: '■fn_end' });
    assert.equal(single.choices[0]?.message.content, 'const a = 1;');
    assert.equal(single.choices[0]?.finish_reason, 'stop');
    const list = await chat(server, { ...say('list'), stop: ['NO_MORE', 'END'] });
    assert.equal(list.choices[0]?.message.content, 'alpha ');
    assert.equal(list.usage.completion_tokens, 1);
  });

  test('scripted replies come per call in order, then by matcher, then the default', async (t) => {
    // Matchers last as long as the server: this one is the test's own.
    const server = await startModelServer();
    t.after(() => server.close());
    server.replyWhen('weather', 'It is sunny.');
    server.replyWhen((c) => c.model === 'test-fast', 'fast answer');
    server.reply('first scripted', { refusal: 'I cannot help with that.' });
    const first = await chat(server, say('weather?'));
    assert.equal(first.choices[0]?.message.content, 'first scripted');
    const refusal = await chat(server, say('weather?'));
    assert.deepEqual(refusal.choices[0]?.message, {
      role: 'assistant',
      content: null,
      refusal: 'I cannot help with that.',
    });
    assert.equal(
      (await chat(server, say('the weather in Paris'))).choices[0]?.message.content,
      'It is sunny.',
    );
    assert.equal(
      (await chat(server, { ...say('hi'), model: 'test-fast' })).choices[0]?.message.content,
      'fast answer',
    );
    assert.equal((await chat(server, say('other'))).choices[0]?.message.content, 'echo: other');
  });

  test('a tool call gives finish_reason tool_calls, scripted or as tool_choice asks', async () => {
    const tools = [
      {
        type: 'function',
        function: {
          name: 'getWeather',
          parameters: {
            type: 'object',
            properties: {
              city: { type: 'string' },
              days: { type: 'integer', minimum: 1 },
              unit: { enum: ['c', 'f'] },
            },
            required: ['city', 'days', 'unit'],
          },
        },
      },
      { type: 'function', function: { name: 'noop' } },
    ];
    server.reply({ toolCalls: [{ name: 'getWeather', arguments: { city: 'Paris' } }, { name: 'noop' }] });
    const scripted = await chat(server, { ...say('weather'), tools });
    assert.equal(scripted.choices[0]?.finish_reason, 'tool_calls');
    const calls = scripted.choices[0]?.message.tool_calls ?? [];
    assert.deepEqual(
      calls.map((c) => [c.type, c.function.name, c.function.arguments]),
      [
        ['function', 'getWeather', '{"city":"Paris"}'],
        ['function', 'noop', '{}'],
      ],
    );
    assert.equal(new Set(calls.map((c) => c.id)).size, 2, 'each call has an id of its own');
    assert.equal(scripted.choices[0]?.message.content, null);

    const required = await chat(server, { ...say('weather'), tools, tool_choice: 'required' });
    assert.equal(
      required.choices[0]?.message.tool_calls?.[0]?.function.arguments,
      '{"city":"","days":1,"unit":"c"}',
    );
    const named = await chat(server, {
      ...say('weather'),
      tools,
      tool_choice: { type: 'function', function: { name: 'noop' } },
    });
    assert.equal(named.choices[0]?.message.tool_calls?.[0]?.function.name, 'noop');
    const auto = await chat(server, { ...say('weather'), tools });
    assert.equal(auto.choices[0]?.finish_reason, 'stop', 'without a script, auto answers text');
  });

  test('response_format json gives JSON text: scripted, {} or what the schema requires', async () => {
    const object = await chat(server, { ...say('json please'), response_format: { type: 'json_object' } });
    assert.equal(object.choices[0]?.message.content, '{}');
    const schema = {
      type: 'object',
      properties: {
        name: { type: 'string' },
        tags: { type: 'array', items: { type: 'string' } },
        ok: { type: 'boolean' },
        extra: { type: 'string' },
      },
      required: ['name', 'tags', 'ok'],
    };
    const fitting = await chat(server, {
      ...say('json please'),
      response_format: { type: 'json_schema', json_schema: { name: 'answer', schema, strict: true } },
    });
    assert.deepEqual(JSON.parse(fitting.choices[0]?.message.content ?? ''), {
      name: '',
      tags: [],
      ok: false,
    });
    server.reply({ json: { name: 'Ada', tags: ['x'], ok: true } });
    const scripted = await chat(server, { ...say('json please'), response_format: { type: 'json_object' } });
    assert.deepEqual(JSON.parse(scripted.choices[0]?.message.content ?? ''), {
      name: 'Ada',
      tags: ['x'],
      ok: true,
    });
  });

  test('refuses malformed requests with 400 in OpenAI’s error shape', async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ messages: [] }, 'messages'],
      [{ ...say('x'), stream_options: { include_usage: true } }, 'stream_options'],
      [{ ...say('x'), tool_choice: 'required' }, 'tool_choice'],
      [{ ...say('x'), max_tokens: 0 }, 'max_tokens'],
      [{ ...say('x'), stop: [1] }, 'stop'],
      [{ messages: [{ role: 'robot', content: 'x' }] }, 'messages[0]'],
    ];
    for (const [body, param] of cases) {
      const answer = await call(server, '/chat/completions', { model: 'test-best', ...body });
      assert.equal(answer.status, 400, JSON.stringify(body));
      assert.equal(errorOf(answer).param, param);
      assert.equal(errorOf(answer).type, 'invalid_request_error');
    }
    const notJson = await fetch(`${server.url}/chat/completions`, { method: 'POST', body: '{oops' });
    assert.equal(notJson.status, 400);
  });

  test('streams one chunk per token, then the finish reason, the usage when asked, and [DONE]', async () => {
    server.reply('Hello there, friend.');
    const whole = await chat(server, say('hi'));
    server.reply('Hello there, friend.');
    const { chunks, done } = await stream(server, { ...say('hi'), stream_options: { include_usage: true } });
    assert.ok(done, 'the stream ends with [DONE]');
    assert.deepEqual(chunks[0]?.choices[0]?.delta, { role: 'assistant', content: '' });
    const tokens = chunks.slice(1, -2).map((c) => c.choices[0]?.delta.content);
    assert.deepEqual(tokens, ['Hello', ' there', ',', ' friend', '.']);
    assert.equal(streamedText(chunks), whole.choices[0]?.message.content);
    assert.equal(chunks.at(-2)?.choices[0]?.finish_reason, 'stop');
    assert.deepEqual(chunks.at(-1)?.choices, []);
    assert.deepEqual(chunks.at(-1)?.usage, whole.usage);
    assert.ok(chunks.slice(0, -1).every((c) => c.usage === null && c.object === 'chat.completion.chunk'));

    server.reply({ refusal: 'No, sorry.' });
    const refusal = await stream(server, say('hi'));
    assert.equal(refusal.chunks.map((c) => c.choices[0]?.delta.refusal ?? '').join(''), 'No, sorry.');
    assert.equal(refusal.chunks.at(-1)?.choices[0]?.finish_reason, 'stop');

    const withoutUsage = await stream(server, { ...say('hi'), max_tokens: 1 });
    assert.ok(withoutUsage.chunks.every((c) => !('usage' in c)));
    assert.equal(streamedText(withoutUsage.chunks), 'echo');
    assert.equal(withoutUsage.chunks.at(-1)?.choices[0]?.finish_reason, 'length');
  });

  test('streams tool calls as deltas in OpenAI’s shape', async () => {
    server.reply({ toolCalls: [{ name: 'lookup', arguments: { query: 'red fox' } }] });
    const { chunks } = await stream(server, {
      ...say('find'),
      tools: [{ type: 'function', function: { name: 'lookup' } }],
    });
    const deltas = chunks.flatMap((c) => c.choices[0]?.delta.tool_calls ?? []);
    assert.equal(deltas[0]?.function.name, 'lookup');
    assert.equal(deltas[0]?.type, 'function');
    assert.match(deltas[0]?.id ?? '', /^call_/);
    assert.ok(deltas.length > 3, 'the arguments come in pieces');
    assert.ok(deltas.every((d) => d.index === 0));
    assert.equal(deltas.map((d) => d.function.arguments).join(''), '{"query":"red fox"}');
    assert.equal(chunks.at(-1)?.choices[0]?.finish_reason, 'tool_calls');
  });

  test('paces a stream: a delay before the first token and between tokens, each flushed as it goes', async () => {
    server.pace({ firstTokenDelayMs: 150, tokenDelayMs: 40 });
    try {
      server.reply('a b c d');
      const { arrivals } = await stream(server, say('slow'));
      assert.ok((arrivals[0] ?? 0) >= 140, `the first chunk waited (${arrivals[0]} ms)`);
      const tokenArrivals = arrivals.slice(1, 5);
      for (let i = 1; i < tokenArrivals.length; i++) {
        const gap = (tokenArrivals[i] ?? 0) - (tokenArrivals[i - 1] ?? 0);
        assert.ok(gap >= 30, `token ${i} came ${gap} ms after the one before`);
      }
    } finally {
      server.pace({ firstTokenDelayMs: 0, tokenDelayMs: 0 });
    }
  });

  test('notices a client that leaves in the middle of a stream, and stops writing', async () => {
    server.pace({ tokenDelayMs: 30 });
    try {
      server.reply(Array.from({ length: 100 }, (_, i) => `word${i}`).join(' '));
      const leaving = new AbortController();
      const response = await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test-best', stream: true, ...say('long') }),
        signal: leaving.signal,
      });
      const received = server.requests.at(-1);
      assert.ok(response.body);
      const reader = response.body.getReader();
      await reader.read();
      leaving.abort();
      assert.equal(await received?.settled, 'aborted');
      assert.equal(received?.outcome, 'aborted');
    } finally {
      server.pace({ tokenDelayMs: 0 });
    }
  });

  test('embeddings are deterministic, normalized, and closer for similar texts', async () => {
    const texts = [
      'The quick brown fox jumps',
      'the quick brown foxes jumped',
      'Quarterly tax filing deadline',
    ];
    const answer = await call(server, '/embeddings', { model: 'test-embeddings', input: texts });
    assert.equal(answer.status, 200);
    const body = answer.body as Embeddings;
    assert.equal(body.object, 'list');
    assert.equal(body.model, 'test-embeddings');
    assert.deepEqual(body.usage, { prompt_tokens: 14, total_tokens: 14 });
    const vectors = body.data.map((d) => d.embedding).filter((e) => Array.isArray(e));
    assert.deepEqual(
      body.data.map((d) => [d.object, d.index]),
      [
        ['embedding', 0],
        ['embedding', 1],
        ['embedding', 2],
      ],
    );
    for (const vector of vectors) {
      assert.equal(vector.length, 64);
      assert.ok(Math.abs(similarity(vector, vector) - 1) < 1e-9, 'length 1');
    }
    const [fox, foxes, tax] = vectors;
    assert.ok(fox && foxes && tax);
    assert.ok(similarity(fox, foxes) > 0.5, `similar texts are close (${similarity(fox, foxes)})`);
    assert.ok(similarity(fox, foxes) > similarity(fox, tax) + 0.3, 'unrelated texts are further apart');

    const again = (
      await call(server, '/embeddings', { model: 'test-embeddings', input: texts[0], dimensions: 8 })
    ).body as Embeddings;
    assert.equal((again.data[0]?.embedding as number[]).length, 8);
    const base64 = (
      await call(server, '/embeddings', {
        model: 'test-embeddings',
        input: texts[0],
        encoding_format: 'base64',
      })
    ).body as Embeddings;
    const bytes = Buffer.from(String(base64.data[0]?.embedding), 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4));
    assert.deepEqual(decoded, Array.from(new Float32Array(fox)));
  });

  test('transcribes multipart audio into the scripted transcript', async () => {
    const form = new FormData();
    form.append('model', 'test-transcribe');
    form.append('file', new Blob([new Uint8Array([1, 2, 3])], { type: 'audio/wav' }), 'voice.wav');
    const answer = await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', body: form });
    assert.equal(answer.status, 200);
    assert.deepEqual(await answer.json(), { text: 'hello from the audio' });
    const received = server.requests.at(-1)?.body;
    assert.ok(received instanceof MultipartForm);
    assert.deepEqual(received.fields, { model: 'test-transcribe' });
    assert.deepEqual(received.files, { file: { filename: 'voice.wav', contentType: 'audio/wav', size: 3 } });
    form.append('response_format', 'text');
    const text = await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', body: form });
    assert.equal(await text.text(), 'hello from the audio');
    const verbose = new FormData();
    verbose.append('model', 'test-transcribe');
    verbose.append('response_format', 'verbose_json');
    verbose.append('file', new Blob([new Uint8Array(AUDIO_BYTES_PER_SECOND * 2)]), 'two-seconds.wav');
    const timed = await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', body: verbose });
    assert.deepEqual(await timed.json(), {
      task: 'transcribe',
      language: 'english',
      duration: 2,
      text: 'hello from the audio',
    });
    const withoutFile = new FormData();
    withoutFile.append('model', 'test-transcribe');
    const refused = await fetch(`${server.url}/audio/transcriptions`, { method: 'POST', body: withoutFile });
    assert.equal(refused.status, 400);
  });
});

describe('the test model server with an API key', () => {
  test('requires the bearer key and records the headers', async (t) => {
    const server = await startModelServer({ apiKey: 'sk-test-key' });
    t.after(() => server.close());
    for (const headers of [{}, { authorization: 'Bearer wrong' }] as Record<string, string>[]) {
      const refused = await call(
        server,
        '/chat/completions',
        { model: 'test-best', ...say('hi') },
        { headers },
      );
      assert.equal(refused.status, 401);
      assert.equal(errorOf(refused).code, 'invalid_api_key');
    }
    const allowed = await call(server, '/models', undefined, {
      headers: { authorization: 'Bearer sk-test-key' },
    });
    assert.equal(allowed.status, 200);
    assert.equal(server.requests.at(-1)?.headers.authorization, 'Bearer sk-test-key');
    assert.equal(server.requests[1]?.headers.authorization, 'Bearer wrong');
  });

  test('without a transcript, transcriptions are not served', async (t) => {
    const server = await startModelServer({ models: ['only-model'] });
    t.after(() => server.close());
    assert.equal((await call(server, '/audio/transcriptions', { model: 'only-model' })).status, 404);
    assert.deepEqual((await call(server, '/models')).body, {
      object: 'list',
      data: [{ id: 'only-model', object: 'model', created: 0, owned_by: 'parley-tests' }],
    });
  });
});

describe('the test model server’s failure modes', () => {
  let server: ModelServer;
  before(async () => {
    server = await startModelServer();
  });
  after(() => server.close());

  test('429 with retry-after, for the next N calls, then answers again', async () => {
    server.fail({ kind: 'status', status: 429, retryAfterSeconds: 2 }, { times: 2 });
    for (let i = 0; i < 2; i++) {
      const limited = await call(server, '/chat/completions', { model: 'test-best', ...say('hi') });
      assert.equal(limited.status, 429);
      assert.equal(limited.headers.get('retry-after'), '2');
      assert.equal(errorOf(limited).code, 'rate_limit_exceeded');
    }
    assert.equal((await chat(server, say('hi'))).choices[0]?.message.content, 'echo: hi');
  });

  test('500, 502 and 503 in OpenAI’s error shape, and an error body of the test’s own', async () => {
    for (const status of [500, 502, 503]) {
      server.fail({ kind: 'status', status });
      const failed = await call(server, '/chat/completions', { model: 'test-best', ...say('hi') });
      assert.equal(failed.status, status);
      assert.equal(errorOf(failed).type, 'server_error');
    }
    server.fail({
      kind: 'status',
      status: 400,
      error: { message: 'Context too long', type: 'invalid_request_error', code: 'context_length_exceeded' },
    });
    const custom = await call(server, '/chat/completions', { model: 'test-best', ...say('hi') });
    assert.equal(custom.status, 400);
    assert.deepEqual(errorOf(custom), {
      message: 'Context too long',
      type: 'invalid_request_error',
      param: null,
      code: 'context_length_exceeded',
    });
  });

  test('fails by model and by path, leaving the others alone', async () => {
    server.fail({ kind: 'status', status: 503 }, { model: 'test-fast', times: Infinity });
    server.fail({ kind: 'status', status: 500 }, { path: '/v1/embeddings' });
    try {
      assert.equal(
        (await call(server, '/chat/completions', { model: 'test-fast', ...say('a') })).status,
        503,
      );
      assert.equal(
        (await call(server, '/chat/completions', { model: 'test-fast', ...say('b') })).status,
        503,
      );
      assert.equal(
        (await call(server, '/chat/completions', { model: 'test-best', ...say('c') })).status,
        200,
      );
      assert.equal((await call(server, '/embeddings', { model: 'test-embeddings', input: 'x' })).status, 500);
      assert.equal((await call(server, '/embeddings', { model: 'test-embeddings', input: 'x' })).status, 200);
    } finally {
      server.clearFailures();
    }
  });

  test('latency delays the answer', async () => {
    const other = await startModelServer();
    try {
      other.fail({ kind: 'latency', ms: 200 });
      const started = performance.now();
      const completion = await chat(other, say('later'));
      assert.ok(performance.now() - started >= 190);
      assert.equal(completion.choices[0]?.message.content, 'echo: later');
    } finally {
      await other.close();
    }
  });

  test('a hang never answers: the client gives up, and the server records that it left', async () => {
    server.fail({ kind: 'hang' });
    await assert.rejects(
      call(
        server,
        '/chat/completions',
        { model: 'test-best', ...say('hi') },
        { signal: AbortSignal.timeout(200) },
      ),
      { name: 'TimeoutError' },
    );
    assert.equal(await server.requests.at(-1)?.settled, 'aborted');
  });

  test('a connection reset, a JSON answer cut halfway, malformed JSON', async () => {
    server.fail({ kind: 'reset' });
    await assert.rejects(call(server, '/chat/completions', { model: 'test-best', ...say('hi') }), TypeError);
    assert.equal(await server.requests.at(-1)?.settled, 'dropped');

    server.fail({ kind: 'cut' });
    await assert.rejects(call(server, '/chat/completions', { model: 'test-best', ...say('hi') }), TypeError);

    server.fail({ kind: 'malformed-json' });
    const malformed = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-best', ...say('hi') }),
    });
    assert.equal(malformed.status, 200);
    assert.equal(malformed.headers.get('content-type'), 'application/json');
    await assert.rejects(malformed.json(), SyntaxError);
  });

  test('a stream cut in the middle: some tokens, then the connection ends without [DONE]', async () => {
    server.reply('one two three four five six');
    server.fail({ kind: 'cut', afterChunks: 3 });
    const response = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-best', stream: true, ...say('hi') }),
    });
    assert.equal(response.status, 200);
    let text = '';
    await assert.rejects(async () => {
      assert.ok(response.body);
      for await (const piece of textOf(response.body)) text += piece;
    }, TypeError);
    const chunks = parseSseBlocks(text).frames.map((f) => JSON.parse(f.data) as Chunk);
    assert.equal(streamedText(chunks), 'one two three');
    assert.ok(!text.includes('[DONE]'));
    assert.equal(await server.requests.at(-1)?.settled, 'dropped');
  });

  test('a malformed stream chunk', async () => {
    server.fail({ kind: 'malformed-json' });
    const response = await fetch(`${server.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test-best', stream: true, ...say('hi') }),
    });
    const [first] = parseSseBlocks(await response.text()).frames;
    assert.throws(() => JSON.parse(first?.data ?? ''), SyntaxError);
  });

  test('close() ends a hanging request: the client sees the connection go', async () => {
    const other = await startModelServer();
    other.fail({ kind: 'hang' });
    const pending = call(other, '/chat/completions', { model: 'test-best', ...say('hi') });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const refused = assert.rejects(pending, TypeError);
    await other.close();
    await refused;
    assert.equal(other.requests[0]?.outcome, 'dropped');
  });
});
