import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, LimitExceededError, QuotaExceededError } from '@botpress/client';
import { createTestBot, rejectsWith, waitFor } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { outcomeOf, STORE_FAULT, withoutTable } from './helpers/store-failure.ts';

/** A PUT of raw bytes, as the client's uploadFile helper sends it (no credentials: the URL authorizes). */
async function put(url: string, body: Uint8Array | string, headers: Record<string, string> = {}) {
  const res = await fetch(url, {
    method: 'PUT',
    body,
    headers: { 'content-type': 'application/octet-stream', ...headers },
  });
  return { status: res.status, body: await res.text(), etag: res.headers.get('etag') };
}

async function download(url: string, headers: Record<string, string> = {}) {
  const res = await fetch(url, { headers });
  return { status: res.status, headers: res.headers, bytes: Buffer.from(await res.arrayBuffer()) };
}

for (const store of await testStores()) {
  describe(`Files API: contents in and out (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    let source: ReturnType<typeof createServer>;
    let sourceUrl: string;
    const remote = randomBytes(3000);
    before(async () => {
      t = await startTestServer(store, { filesMaxSizeMb: '1', filesBotStorageMb: '3' });
      bot = await createTestBot(t, 'files-content');
      // The `url` form of uploadFile downloads the content first: from this local server.
      source = createServer((_req, res) => res.end(remote));
      await new Promise<void>((resolve) => source.listen(0, '127.0.0.1', resolve));
      sourceUrl = `http://127.0.0.1:${(source.address() as AddressInfo).port}/doc.bin`;
    });
    after(async () => {
      source.close();
      await t.close();
    });

    const forms: [string, () => { content?: unknown; url?: string }, () => Buffer][] = [
      ['a string', () => ({ content: 'héllo wörld ✓' }), () => Buffer.from('héllo wörld ✓')],
      [
        'a Buffer',
        () => ({ content: Buffer.from([0, 1, 2, 255, 254]) }),
        () => Buffer.from([0, 1, 2, 255, 254]),
      ],
      [
        'an ArrayBuffer',
        () => ({ content: new Uint8Array([9, 8, 7, 6]).buffer }),
        () => Buffer.from([9, 8, 7, 6]),
      ],
      ['a Blob', () => ({ content: new Blob(['blob ', 'content']) }), () => Buffer.from('blob content')],
      ['a url', () => ({ url: sourceUrl }), () => remote],
    ];
    for (const [name, input, expected] of forms) {
      test(`uploadFile with ${name}: stored, and read back byte-identical`, async () => {
        const key = `forms/${name.replace(/\s/g, '-')}.bin`;
        const uploaded = await bot.client.uploadFile({ key, ...(input() as { content: string }) });
        assert.equal(uploaded.file.status, 'upload_pending', 'the helper answers the upsert record');
        const { file } = await bot.client.getFile({ id: key });
        assert.equal(file.status, 'upload_completed');
        assert.equal(file.size, expected().length);
        const got = await download(file.url);
        assert.equal(got.status, 200);
        assert.deepEqual(got.bytes, expected());
        assert.equal(got.headers.get('content-length'), String(expected().length));
        assert.equal(got.headers.get('content-type'), 'application/octet-stream');
        assert.match(got.headers.get('etag') ?? '', /^"[0-9a-f]{64}"$/);
        // The URL handed out at upsert time works once the content is there.
        assert.deepEqual((await download(uploaded.file.url)).bytes, expected());
      });
    }

    test('a JSON upload is stored as bytes, not parsed; the content type comes from the request or the key', async () => {
      const text = '{"a": 1,   "b": [true]}';
      await bot.client.uploadFile({ key: 'data.json', content: text, contentType: 'application/json' });
      const { file } = await bot.client.getFile({ id: 'data.json' });
      const got = await download(file.url);
      assert.equal(got.bytes.toString(), text);
      assert.equal(got.headers.get('content-type'), 'application/json');
      const { file: md } = await bot.client.upsertFile({ key: 'notes/readme.md', size: 1 });
      assert.equal(md.contentType, 'text/markdown');
      const { file: unknown } = await bot.client.upsertFile({ key: 'blob.xyz', size: 1 });
      assert.equal(unknown.contentType, 'application/octet-stream');
    });

    test('downloads answer ranges, ETags and HEAD', async () => {
      const bytes = Buffer.from('0123456789abcdefghij');
      await bot.client.uploadFile({ key: 'range.txt', content: bytes });
      const { file } = await bot.client.getFile({ id: 'range.txt' });
      const part = await download(file.url, { range: 'bytes=5-9' });
      assert.equal(part.status, 206);
      assert.equal(part.bytes.toString(), '56789');
      assert.equal(part.headers.get('content-range'), 'bytes 5-9/20');
      assert.equal((await download(file.url, { range: 'bytes=-3' })).bytes.toString(), 'hij');
      assert.equal((await download(file.url, { range: 'bytes=15-' })).bytes.toString(), 'fghij');
      const outside = await download(file.url, { range: 'bytes=50-60' });
      assert.equal(outside.status, 416);
      assert.equal(outside.headers.get('content-range'), 'bytes */20');
      const etag = (await download(file.url)).headers.get('etag') ?? '';
      assert.equal((await download(file.url, { 'if-none-match': etag })).status, 304);
      const head = await fetch(file.url, { method: 'HEAD' });
      assert.equal(head.status, 200);
      assert.equal(head.headers.get('content-length'), '20');
    });

    test('a large upload through a Postgres chunk boundary reads back whole and in ranges', async () => {
      const bytes = randomBytes(700 * 1024 + 17);
      await bot.client.uploadFile({ key: 'big.bin', content: bytes });
      const { file } = await bot.client.getFile({ id: 'big.bin' });
      assert.deepEqual((await download(file.url)).bytes, bytes);
      const from = 256 * 1024 - 10;
      const part = await download(file.url, { range: `bytes=${from}-${from + 300_000}` });
      assert.deepEqual(part.bytes, bytes.subarray(from, from + 300_001));
      await bot.client.deleteFile({ id: 'big.bin' });
    });

    test('a tampered or expired upload URL answers 403 and stores nothing', async () => {
      const { file } = await bot.client.upsertFile({ key: 'guarded.txt', size: 5 });
      const url = new URL(file.uploadUrl);
      const signature = url.searchParams.get('signature') ?? '';
      const tampered = new URL(url);
      // Its first character changed, to one it is not: writing "AA" over its last two changed nothing when
      // they already were "AA" (one signature in 4,096; it happened on CI).
      tampered.searchParams.set('signature', `${signature.startsWith('A') ? 'B' : 'A'}${signature.slice(1)}`);
      assert.equal((await put(tampered.toString(), 'hello')).status, 403);
      const later = new URL(url);
      later.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 3600));
      assert.equal((await put(later.toString(), 'hello')).status, 403, 'a longer lifetime is not signed');
      // A URL signed correctly but whose time has passed.
      const row = await t.server.store.db
        .selectFrom('files')
        .selectAll()
        .where('id', '=', file.id)
        .executeTakeFirstOrThrow();
      const { signer } = t.server.domain.files;
      const past = Math.floor(Date.now() / 1000) - 10;
      const expired = new URL(url);
      expired.searchParams.set('expires', String(past));
      expired.searchParams.set('signature', await signer.sign(['upload', row.id, row.upload_nonce], past));
      const refused = await put(expired.toString(), 'hello');
      assert.equal(refused.status, 403);
      assert.equal((JSON.parse(refused.body) as { type: string }).type, 'Forbidden');
      const { file: after } = await bot.client.getFile({ id: file.id });
      assert.equal(after.status, 'upload_pending');
      assert.equal(after.size, null);
      // An upsert of the same key voids the URLs handed out before.
      await bot.client.upsertFile({ key: 'guarded.txt', size: 5 });
      assert.equal((await put(file.uploadUrl, 'hello')).status, 403);
    });

    test('an upload URL stores one content: a second PUT after a completed upload is refused', async () => {
      const { file } = await bot.client.upsertFile({ key: 'once.txt', size: 5 });
      assert.equal((await put(file.uploadUrl, 'first')).status, 200);
      const again = await put(file.uploadUrl, 'other');
      assert.equal(again.status, 403);
      const body = JSON.parse(again.body) as { type: string; message: string };
      assert.equal(body.type, 'Forbidden');
      assert.match(body.message, /upsert the file again/);
      const { file: stored } = await bot.client.getFile({ id: file.id });
      assert.equal(stored.status, 'upload_completed');
      assert.equal((await download(stored.url)).bytes.toString(), 'first', 'the first content stays');
      // Two PUTs of one URL at once: one content is stored, the other upload is refused.
      const { file: raced } = await bot.client.upsertFile({ key: 'raced.txt', size: 5 });
      const both = await Promise.all([put(raced.uploadUrl, 'one..'), put(raced.uploadUrl, 'two..')]);
      assert.deepEqual(both.map((r) => r.status).sort(), [200, 403]);
      const winner = both[0].status === 200 ? 'one..' : 'two..';
      const { file: settled } = await bot.client.getFile({ id: raced.id });
      assert.equal((await download(settled.url)).bytes.toString(), winner);
    });

    test('a download link made before a reset of the file does not serve the new content', async () => {
      await bot.client.uploadFile({ key: 'reset.txt', content: 'version one' });
      const { file: before } = await bot.client.getFile({ id: 'reset.txt' });
      assert.equal((await download(before.url)).bytes.toString(), 'version one');
      // A reset: the same key upserted again (the same record), then new content.
      await bot.client.uploadFile({ key: 'reset.txt', content: 'version two' });
      const { file: after } = await bot.client.getFile({ id: 'reset.txt' });
      assert.equal(after.id, before.id, 'the same file');
      const old = await download(before.url);
      assert.equal(old.status, 403);
      assert.doesNotMatch(old.bytes.toString(), /version two/);
      assert.equal((await download(after.url)).bytes.toString(), 'version two');
      // The link handed out by the upsert serves the content uploaded for that upsert.
      const { file: third } = await bot.client.upsertFile({ key: 'reset.txt', size: 13 });
      assert.equal((await download(third.url)).status, 404, 'nothing uploaded yet');
      assert.equal((await put(third.uploadUrl, 'version three')).status, 200);
      assert.equal((await download(third.url)).bytes.toString(), 'version three');
      assert.equal((await download(after.url)).status, 403);
    });

    test('a declared content type is a media type of token characters: anything else is refused', async () => {
      const refused = [
        'text/html\r\nx-injected: 1',
        'text/plain\n',
        'text/plain; charset="utf-8"',
        'text/html; charset=utf-8\rset-cookie: a=b',
        'text',
        'text/',
        '/plain',
        'text/pl ain',
        'text/plain; charset',
        'text/plain;charset=ütf-8',
        'text/plain\u0000',
        'a/b/c',
      ];
      for (const contentType of refused) {
        const res = await fetch(`${t.url}/v1/files`, {
          method: 'PUT',
          headers: {
            authorization: `Bearer ${bot.key}`,
            'x-bot-id': bot.botId,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ key: 'typed.bin', size: 1, contentType }),
        });
        const body = (await res.json()) as { type: string; message: string };
        assert.equal(res.status, 400, JSON.stringify(contentType));
        assert.equal(body.type, 'InvalidPayload', JSON.stringify(contentType));
        assert.match(body.message, /contentType/, 'the message names the field');
      }
      await rejectsWith(
        bot.client.upsertFile({ key: 'typed.bin', size: 1, contentType: 'text/html\r\nx: 1' }),
        InvalidPayloadError,
      );
      for (const contentType of [
        'text/plain',
        'text/plain; charset=utf-8',
        'text/plain;charset=UTF-8;format=flowed',
        'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        'image/svg+xml',
      ]) {
        const { file } = await bot.client.upsertFile({ key: 'typed.bin', size: 1, contentType });
        assert.equal(file.contentType, contentType);
      }
    });

    test('a content type stored before the check (with CR/LF) is served as bytes to save, not a 500', async () => {
      await bot.client.uploadFile({ key: 'legacy.html', content: '<p>old row</p>' });
      const { file } = await bot.client.getFile({ id: 'legacy.html' });
      await t.server.store.db
        .updateTable('files')
        .set({ content_type: 'text/html\r\nx-injected: 1' })
        .where('id', '=', file.id)
        .execute();
      const got = await download(file.url);
      assert.equal(got.status, 200);
      assert.equal(got.headers.get('content-type'), 'application/octet-stream');
      assert.match(got.headers.get('content-disposition') ?? '', /^attachment;/);
      assert.equal(got.headers.get('x-injected'), null);
      assert.equal(got.bytes.toString(), '<p>old row</p>');
    });

    test('an upload larger or smaller than declared is refused and the file marked upload_failed', async () => {
      const { file } = await bot.client.upsertFile({ key: 'short.txt', size: 5 });
      const larger = await put(file.uploadUrl, 'hello world');
      assert.equal(larger.status, 413);
      assert.equal((JSON.parse(larger.body) as { type: string }).type, 'PayloadTooLarge');
      let { file: failed } = await bot.client.getFile({ id: file.id });
      assert.equal(failed.status, 'upload_failed');
      assert.match(failed.failedStatusReason ?? '', /declared/);
      const smaller = await put(file.uploadUrl, 'hey');
      assert.equal(smaller.status, 400);
      ({ file: failed } = await bot.client.getFile({ id: file.id }));
      assert.equal(failed.status, 'upload_failed');
      assert.match(failed.failedStatusReason ?? '', /3 bytes/);
      // The same URL with the right bytes: a retry of a failed upload succeeds (none was stored).
      assert.equal((await put(file.uploadUrl, 'hello')).status, 200);
      assert.equal((await bot.client.getFile({ id: file.id })).file.status, 'upload_completed');
    });

    test('a chunked upload (no content-length) larger than declared is cut off and refused', async () => {
      const { file } = await bot.client.upsertFile({ key: 'stream.bin', size: 10 });
      const body = new ReadableStream<Uint8Array>({
        start(controller) {
          for (let i = 0; i < 20; i++) controller.enqueue(new Uint8Array(1000));
          controller.close();
        },
      });
      const init: RequestInit & { duplex: 'half' } = { method: 'PUT', body, duplex: 'half' };
      const res = await fetch(file.uploadUrl, init);
      assert.equal(res.status, 413);
      assert.equal((await bot.client.getFile({ id: file.id })).file.status, 'upload_failed');
    });

    test('files larger than the limit are refused at upsert; the bot storage limit answers QuotaExceeded', async () => {
      await rejectsWith(
        bot.client.upsertFile({ key: 'huge.bin', size: 2 * 1024 * 1024 }),
        LimitExceededError,
      );
      const quota = await createTestBot(t, 'quota');
      const mb = 1024 * 1024;
      await quota.client.upsertFile({ key: 'a', size: mb });
      await quota.client.upsertFile({ key: 'b', size: mb });
      await quota.client.upsertFile({ key: 'c', size: mb });
      await rejectsWith(quota.client.upsertFile({ key: 'd', size: 1 }), QuotaExceededError);
      // Replacing a file counts its new size instead of its old one; deleting one frees its share.
      await quota.client.upsertFile({ key: 'c', size: mb - 10 });
      await quota.client.deleteFile({ id: 'a' });
      await quota.client.upsertFile({ key: 'd', size: mb });
    });

    test('public_content files have a permanent URL anyone may read; private URLs are signed', async () => {
      await bot.client.uploadFile({
        key: 'public/logo.svg',
        content: '<svg/>',
        accessPolicies: ['public_content'],
        publicContentImmediatelyAccessible: true,
      });
      const { file } = await bot.client.getFile({ id: 'public/logo.svg' });
      assert.doesNotMatch(file.url, /signature=/);
      assert.equal(file.url, (await bot.client.getFile({ id: file.id })).file.url, 'the same URL every time');
      const got = await download(file.url);
      assert.equal(got.bytes.toString(), '<svg/>');
      assert.equal(got.headers.get('content-type'), 'image/svg+xml');

      await bot.client.uploadFile({ key: 'private.txt', content: 'secret' });
      const { file: secret } = await bot.client.getFile({ id: 'private.txt' });
      const unsigned = new URL(secret.url);
      unsigned.search = '';
      assert.equal((await download(unsigned.toString())).status, 403);
      assert.equal((await download(`${t.url}/file-content/public/${secret.id}`)).status, 404);
      // Taking public_content away takes the public URL away.
      await bot.client.updateFileMetadata({ id: file.id, accessPolicies: [] });
      assert.equal((await download(file.url)).status, 404);
    });

    test('file URLs of a file the store cannot read answer the fault, not "not found" or "forbidden"', async () => {
      await bot.client.uploadFile({
        key: 'public/outage.svg',
        content: '<svg/>',
        accessPolicies: ['public_content'],
        publicContentImmediatelyAccessible: true,
      });
      const { file: open } = await bot.client.getFile({ id: 'public/outage.svg' });
      await bot.client.uploadFile({ key: 'outage.txt', content: 'secret' });
      const { file: signed } = await bot.client.getFile({ id: 'outage.txt' });
      const { file: pending } = await bot.client.upsertFile({ key: 'outage-pending.txt', size: 5 });
      const answers = await withoutTable(t, 'files', async () => ({
        public: await outcomeOf(await fetch(open.url)),
        signed: await outcomeOf(await fetch(signed.url)),
        upload: await outcomeOf(await fetch(pending.uploadUrl, { method: 'PUT', body: 'hello' })),
      }));
      assert.deepEqual(answers, { public: STORE_FAULT, signed: STORE_FAULT, upload: STORE_FAULT });
      // Once the store answers again, the same URLs serve and store as before.
      assert.equal((await download(open.url)).bytes.toString(), '<svg/>');
      assert.equal((await download(signed.url)).bytes.toString(), 'secret');
      assert.equal((await put(pending.uploadUrl, 'hello')).status, 200);
    });

    test('deleting a file frees its bytes', async () => {
      await bot.client.uploadFile({ key: 'gone.bin', content: randomBytes(1000) });
      const row = await t.server.store.db
        .selectFrom('files')
        .selectAll()
        .where('key', '=', 'gone.bin')
        .executeTakeFirstOrThrow();
      const blobId = row.blob_id as string;
      const { file } = await bot.client.getFile({ id: 'gone.bin' });
      await bot.client.deleteFile({ id: 'gone.bin' });
      const ledger = await t.server.store.db
        .selectFrom('file_blobs')
        .selectAll()
        .where('id', '=', blobId)
        .execute();
      assert.deepEqual(ledger, [], 'the blob is forgotten once its bytes are freed');
      const chunks = await t.server.store.db
        .selectFrom('file_blob_chunks')
        .select('seq')
        .where('blob_id', '=', blobId)
        .execute();
      assert.deepEqual(chunks, []);
      assert.equal((await download(file.url)).status, 404);
    });

    test('expired files are deleted by the housekeeping sweep', async () => {
      const soon = new Date(Date.now() + 10 * 60_000).toISOString();
      await bot.client.uploadFile({ key: 'temp.txt', content: 'temporary', expiresAt: soon });
      const { file } = await bot.client.getFile({ id: 'temp.txt' });
      assert.equal(
        file.expiresAt,
        new Date(soon.slice(0, 16) + ':00.000Z').toISOString(),
        'kept to the minute',
      );
      // Time passes: the expiry is moved into the past in the store.
      await t.server.store.db
        .updateTable('files')
        .set({ expires_at: new Date(Date.now() - 1000).toISOString() })
        .where('id', '=', file.id)
        .execute();
      await waitFor('the expired file to be deleted', async () => {
        const rows = await t.server.store.db
          .selectFrom('files')
          .select('id')
          .where('id', '=', file.id)
          .execute();
        return rows.length === 0;
      });
      assert.equal((await download(file.url)).status, 404);
    });

    test('uploads from browsers: CORS preflight and headers, x-amz-tagging tolerated', async () => {
      const { file } = await bot.client.upsertFile({ key: 'cors.txt', size: 2 });
      const preflight = await fetch(file.uploadUrl, {
        method: 'OPTIONS',
        headers: { origin: 'http://example.test', 'access-control-request-method': 'PUT' },
      });
      assert.equal(preflight.status, 204);
      assert.match(preflight.headers.get('access-control-allow-methods') ?? '', /PUT/);
      assert.deepEqual(
        (preflight.headers.get('access-control-allow-headers') ?? '').split(',').map((h) => h.trim()),
        ['content-type', 'x-amz-tagging'],
      );
      const res = await put(file.uploadUrl, 'ok', {
        'x-amz-tagging': 'public=true',
        'content-type': 'text/plain',
      });
      assert.equal(res.status, 200);
    });

    test('fuzz: no input to the upload and download routes answers a 5xx', async () => {
      const { file } = await bot.client.upsertFile({ key: 'fuzz.bin', size: 64 });
      const base = new URL(file.uploadUrl);
      const random = () =>
        randomBytes(Math.floor(Math.random() * 24)).toString(Math.random() < 0.5 ? 'hex' : 'latin1');
      const statuses = new Set<number>();
      for (let i = 0; i < 120; i++) {
        const url = new URL(base);
        const choice = i % 6;
        if (choice === 0) url.searchParams.set('expires', random());
        if (choice === 1) url.searchParams.set('signature', random());
        if (choice === 2) url.pathname = `/file-content/${encodeURIComponent(random())}/upload`;
        if (choice === 3) url.searchParams.delete('expires');
        if (choice === 4) url.pathname = `/file-content/${encodeURIComponent(random())}`;
        const method = choice === 4 || i % 7 === 0 ? 'GET' : 'PUT';
        const headers: Record<string, string> = {
          'content-type': ['application/json', 'text/plain', '*/*', 'x'][i % 4] as string,
        };
        if (i % 5 === 0)
          headers.range = [
            'bytes=9-2',
            'bytes=-0',
            'bytes=1-2,4-5',
            `bytes=${randomBytes(3).toString('hex')}`,
          ][i % 4] as string;
        const res = await fetch(url, {
          method,
          headers,
          ...(method === 'PUT' && { body: randomBytes(Math.floor(Math.random() * 128)) }),
        }).catch((err: Error & { cause?: Error }) => {
          throw new Error(
            `${method} ${url.toString()} ${JSON.stringify(headers)}: ${err.cause?.message ?? err.message}`,
          );
        });
        await res.arrayBuffer();
        statuses.add(res.status);
        assert.ok(res.status < 500, `${method} ${url.toString()} answered ${res.status}`);
      }
      assert.ok(statuses.has(403));
    });
  });
}
