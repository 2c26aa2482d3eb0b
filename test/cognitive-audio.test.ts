// `POST /v2/cognitive/transcribe-audio` through `@botpress/cognitive`'s own client (CognitiveBeta, what the
// ADK runtime uses), answered by the provider's `/audio/transcriptions` (the project's test model server):
// audio as a data: URI, a file of the Files API or a URL (under the policy of outgoing webhooks), fallbacks,
// the cache and idempotency keys, metering, and a provider that has no speech-to-text.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { CognitiveBeta } from '@botpress/cognitive';
import { isAxiosError } from 'axios';
import { AUDIO_BYTES_PER_SECOND, parleySettings, startModelServer } from './helpers/model-server.ts';
import type { ModelServer } from './helpers/model-server.ts';
import { MultipartForm } from './helpers/model-multipart.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { docsBlock } from './helpers/docs.ts';

const TRANSCRIPT = 'hello from the audio';
/** A minute of this model's audio costs 0.006 USD (OpenAI's price of whisper-1). */
const PRICES = JSON.stringify({ 'default:test-transcribe': { perMinute: 0.006 } });

/** `seconds` of audio, as the test model server measures it. */
function audioOf(seconds: number): Buffer {
  return Buffer.alloc(AUDIO_BYTES_PER_SECOND * seconds, 7);
}

function dataUri(bytes: Buffer, type = 'audio/wav'): string {
  return `data:${type};base64,${bytes.toString('base64')}`;
}

function cognitiveOf(t: TestServer, bot: TestBot): CognitiveBeta {
  return new CognitiveBeta({ apiUrl: t.url, token: bot.key, botId: bot.botId });
}

/** The last upload the provider received: its fields and its file. */
function lastUpload(models: ModelServer): MultipartForm {
  const body = models.requests.filter((r) => r.path === '/v1/audio/transcriptions').at(-1)?.body;
  assert.ok(body instanceof MultipartForm, 'the provider received a multipart upload');
  return body;
}

function transcriptions(models: ModelServer): number {
  return models.requests.filter((r) => r.path === '/v1/audio/transcriptions').length;
}

/** The status and body of a call the client refused, as the API answered it. */
async function refusal(call: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
  const err = await call.then(
    () => assert.fail('the call was expected to fail'),
    (e: unknown) => e,
  );
  assert.ok(isAxiosError(err) && err.response, `an HTTP error, got ${String(err)}`);
  const body: unknown = err.response.data;
  assert.ok(typeof body === 'object' && body !== null);
  return { status: err.response.status, body: { ...body } };
}

/** A plain HTTP server on loopback that serves audio, and counts the GETs it got. */
async function startAudioServer(): Promise<{ url: string; gets: () => number; close: () => Promise<void> }> {
  let gets = 0;
  const server = http.createServer((request, response) => {
    gets++;
    if (request.url === '/too-large.wav') {
      // Declares more than the limit, sends a little, and stalls: the declaration alone refuses it.
      response.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(30 * 1024 * 1024) });
      response.write(audioOf(1));
      return;
    }
    if (request.url === '/moved') {
      response.writeHead(302, { location: '/voice.ogg' });
      response.end();
      return;
    }
    response.writeHead(200, { 'content-type': 'audio/ogg' });
    response.end(audioOf(3));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    gets: () => gets,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

for (const store of await testStores()) {
  describe(`transcribe-audio (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let audioServer: Awaited<ReturnType<typeof startAudioServer>>;
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      models = await startModelServer({ transcript: TRANSCRIPT });
      audioServer = await startAudioServer();
      t = await startTestServer(store, {
        ...parleySettings(models),
        llmTranscriptionModel: 'test-transcribe',
        llmPrices: PRICES,
      });
      bot = await createTestBot(t, 'audio-bot');
    });
    after(async () => {
      await t?.close();
      await models?.close();
      await audioServer?.close();
    });

    test('the official client transcribes a data: URI, with the duration, the cost and the model', async () => {
      const answer = await cognitiveOf(t, bot).transcribeAudio({
        url: dataUri(audioOf(2)),
        options: { skipCache: true },
      });
      assert.equal(answer.output, TRANSCRIPT);
      const { latency, ...metadata } = answer.metadata;
      assert.deepEqual(metadata, {
        provider: 'default',
        model: 'default:test-transcribe',
        durationSeconds: 2,
        cost: (2 / 60) * 0.006,
        cached: false,
      });
      assert.ok(typeof latency === 'number' && latency >= 0);
      const upload = lastUpload(models);
      assert.deepEqual(upload.fields, { model: 'test-transcribe', response_format: 'verbose_json' });
      assert.deepEqual(upload.files.file, {
        filename: 'audio.wav',
        contentType: 'audio/wav',
        size: AUDIO_BYTES_PER_SECOND * 2,
      });
    });

    test('the request of docs/llm.md is answered as the page says', async () => {
      const block = await docsBlock('docs/llm.md', 'transcribe-audio request');
      const answer = await cognitiveOf(t, bot).transcribeAudio(JSON.parse(block) as { url: string });
      assert.equal(answer.output, TRANSCRIPT);
      assert.equal(answer.metadata.model, 'default:test-transcribe');
      assert.equal(answer.metadata.requestId, 'voice-note-7');
      assert.equal(lastUpload(models).files.file?.contentType, 'audio/wav');
    });

    test('the same audio is answered from the cache; a request id is answered the same for a day', async () => {
      const cognitive = cognitiveOf(t, bot);
      const url = dataUri(audioOf(1), 'audio/mpeg');
      const first = await cognitive.transcribeAudio({ url });
      const asked = transcriptions(models);
      const again = await cognitive.transcribeAudio({ url });
      assert.equal(again.metadata.cached, true);
      assert.equal(transcriptions(models), asked, 'the provider was not asked again');
      assert.equal(first.metadata.cached, false);
      assert.equal(lastUpload(models).files.file?.filename, 'audio.mp3');

      const keyed = await cognitive.transcribeAudio({
        url: dataUri(audioOf(4)),
        options: { requestId: 'voice-note-1', skipCache: true },
      });
      assert.equal(keyed.metadata.requestId, 'voice-note-1');
      const repeated = await cognitive.transcribeAudio({
        url: dataUri(audioOf(5)),
        options: { requestId: 'voice-note-1', skipCache: true },
      });
      assert.equal(repeated.metadata.cached, true);
      assert.equal(repeated.metadata.durationSeconds, 4, 'the first answer of the key');
    });

    test('a file of the Files API is read from the store, even on a server the policy would not reach', async () => {
      const { file } = await bot.client.uploadFile({
        key: 'voice-note.ogg',
        content: audioOf(3),
        contentType: 'audio/ogg',
      });
      const answer = await cognitiveOf(t, bot).transcribeAudio({
        url: file.url,
        options: { skipCache: true },
      });
      assert.equal(answer.output, TRANSCRIPT);
      assert.equal(answer.metadata.durationSeconds, 3);
      assert.deepEqual(lastUpload(models).files.file, {
        filename: 'audio.ogg',
        contentType: 'audio/ogg',
        size: AUDIO_BYTES_PER_SECOND * 3,
      });
    });

    test('a URL on the server’s own network is refused, as an outgoing webhook would be, and never fetched', async () => {
      const { status, body } = await refusal(
        cognitiveOf(t, bot).transcribeAudio({ url: `${audioServer.url}/voice.ogg` }),
      );
      assert.equal(status, 400);
      assert.equal(body.type, 'InvalidPayload');
      assert.match(String(body.message), /not a public address \(PARLEY_WEBHOOK_PRIVATE_TARGETS is off\)/);
      assert.equal(audioServer.gets(), 0);
      const name = await refusal(
        cognitiveOf(t, bot).transcribeAudio({
          url: `http://localhost:${new URL(audioServer.url).port}/x.wav`,
        }),
      );
      assert.equal(name.status, 400);
      assert.match(String(name.body.message), /localhost resolves to .*not a public address/);
      assert.equal(audioServer.gets(), 0, 'a name is checked at its lookup, before any connection');
    });

    test('models: a fallback array passes an unserved model on; other providers’ names take the transcription model', async () => {
      const cognitive = cognitiveOf(t, bot);
      const fell = await cognitive.transcribeAudio({
        url: dataUri(audioOf(1)),
        model: ['default:no-such-whisper', 'best'],
        options: { skipCache: true },
      });
      assert.equal(fell.metadata.model, 'default:test-transcribe');
      assert.deepEqual(fell.metadata.fallbackPath, ['default:no-such-whisper']);
      const hosted = await cognitive.transcribeAudio({
        url: dataUri(audioOf(1)),
        model: 'groq:whisper-large-v3-turbo',
        options: { skipCache: true },
      });
      assert.equal(hosted.metadata.model, 'default:test-transcribe');

      const { status, body } = await refusal(
        cognitive.transcribeAudio({
          url: dataUri(audioOf(1)),
          model: 'default:no-such-whisper',
          options: { skipCache: true },
        }),
      );
      assert.equal(status, 400);
      assert.equal(body.type, 'InvalidDataFormat');
      assert.match(String(body.message), /data\/model\/id/);
    });

    test('bad audio is the caller’s error, named', async () => {
      const cognitive = cognitiveOf(t, bot);
      for (const url of ['data:audio/wav,not-base64', 'ftp://example.com/a.wav', 'not a url']) {
        const { status, body } = await refusal(cognitive.transcribeAudio({ url }));
        assert.equal(status, 400, url);
        assert.equal(body.type, 'InvalidPayload', url);
        assert.match(String(body.message), /^url/, url);
      }
    });

    test('each transcription is a call in getBotAnalytics’ llm block, its cost by the minute', async () => {
      const metered = await createTestBot(t, 'audio-metered-bot');
      const startDate = new Date(Date.now() - 60_000).toISOString();
      const cognitive = cognitiveOf(t, metered);
      await cognitive.transcribeAudio({ url: dataUri(audioOf(6)), options: { skipCache: true } });
      await cognitive.transcribeAudio({ url: dataUri(audioOf(6)) });
      await cognitive.transcribeAudio({ url: dataUri(audioOf(6)) });
      // The client tries a 502 three times: each is a call that failed.
      models.fail({ kind: 'status', status: 503 }, { path: '/v1/audio/transcriptions', times: 3 });
      const failed = await refusal(
        cognitive.transcribeAudio({ url: dataUri(audioOf(1)), options: { skipCache: true } }),
      );
      assert.equal(failed.status, 502);
      assert.deepEqual(failed.body.metadata, { subtype: 'UPSTREAM_PROVIDER_FAILED' });
      const { records } = await t.client().getBotAnalytics({
        id: metered.botId,
        startDate,
        endDate: new Date(Date.now() + 60_000).toISOString(),
      });
      const llm = records.map((r) => r.llm).find((block) => block.calls > 0);
      assert.ok(llm, 'a period with calls');
      assert.equal(llm.calls, 5, 'two answered, three failed; the answer from the cache is not a call');
      assert.equal(llm.errors, 3);
      assert.ok(Math.abs(llm.cost.sum - 2 * (6 / 60) * 0.006) < 1e-12);
    });
  });

  describe(`transcribe-audio where the provider has none (${store.name})`, { skip: store.skip }, () => {
    let models: ModelServer;
    let audioServer: Awaited<ReturnType<typeof startAudioServer>>;
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      models = await startModelServer();
      audioServer = await startAudioServer();
      t = await startTestServer(store, { ...parleySettings(models), webhookPrivateTargets: 'on' });
      bot = await createTestBot(t, 'no-audio-bot');
    });
    after(async () => {
      await t?.close();
      await models?.close();
      await audioServer?.close();
    });

    test('a provider without /audio/transcriptions answers 400 Runtime, saying so, never a 5xx', async () => {
      const { status, body } = await refusal(
        cognitiveOf(t, bot).transcribeAudio({ url: dataUri(audioOf(1)), model: ['best', 'fast'] }),
      );
      assert.equal(status, 400);
      assert.equal(body.type, 'Runtime');
      assert.match(
        String(body.message),
        /not offered by the provider "default".*POST \/audio\/transcriptions/,
      );
      assert.equal(transcriptions(models), 1, 'one 404 says it for every model');
    });

    test('with private targets allowed, a URL on the network is read, redirects followed, its size bounded', async () => {
      // The audio is read before the provider says it has no transcriptions: the GETs show it.
      await refusal(cognitiveOf(t, bot).transcribeAudio({ url: `${audioServer.url}/moved` }));
      assert.equal(audioServer.gets(), 2, 'the redirect, then the audio');
      assert.equal(lastUpload(models).files.file?.filename, 'audio.ogg');
      const { status, body } = await refusal(
        cognitiveOf(t, bot).transcribeAudio({ url: `${audioServer.url}/too-large.wav` }),
      );
      assert.equal(status, 413);
      assert.equal(body.type, 'PayloadTooLarge');
    });
  });
}
