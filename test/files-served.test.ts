// How file contents are served to browsers: what users upload never runs as a page of Parley's origin
// (where the console keeps its token and the webchat its users' keys). Each kind of content's headers,
// on the main origin and on a content origin of its own (PARLEY_CONTENT_URL).
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { buildConfig } from '../src/config.ts';
import { createTestBot } from './helpers/runtime.ts';
import type { TestBot } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const SANDBOX = "sandbox; default-src 'none'";
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==',
  'base64',
);

interface Kind {
  name: string;
  key: string;
  content: string | Buffer;
  contentType?: string;
  /** The type the download answers with. */
  served: string;
  /** Whether a browser may show it on Parley's own origin. */
  inline: boolean;
}

const KINDS: Kind[] = [
  {
    name: 'HTML',
    key: 'kinds/page.html',
    content: '<script>alert(1)</script>',
    served: 'text/html',
    inline: false,
  },
  {
    name: 'SVG',
    key: 'kinds/logo.svg',
    content: '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>',
    served: 'image/svg+xml',
    inline: false,
  },
  {
    name: 'a declared text/html',
    key: 'kinds/innocent.png',
    content: '<script>alert(1)</script>',
    contentType: 'text/html; charset=utf-8',
    served: 'text/html; charset=utf-8',
    inline: false,
  },
  {
    name: 'XHTML',
    key: 'kinds/page.xhtml',
    content: '<html xmlns="http://www.w3.org/1999/xhtml"><script>alert(1)</script></html>',
    contentType: 'application/xhtml+xml',
    served: 'application/xhtml+xml',
    inline: false,
  },
  { name: 'JavaScript', key: 'kinds/app.js', content: 'alert(1)', served: 'text/javascript', inline: false },
  { name: 'an image', key: 'kinds/photo.png', content: PNG, served: 'image/png', inline: true },
  {
    name: 'a PDF',
    key: 'kinds/doc.pdf',
    content: '%PDF-1.4\n%%EOF\n',
    served: 'application/pdf',
    inline: true,
  },
  {
    name: 'plain text',
    key: 'kinds/notes.txt',
    content: '<script>alert(1)</script>',
    served: 'text/plain',
    inline: true,
  },
  {
    name: 'plain text with a charset',
    key: 'kinds/notes-utf8.txt',
    content: 'héllo',
    contentType: 'text/plain; charset=utf-8',
    served: 'text/plain; charset=utf-8',
    inline: true,
  },
  {
    name: 'an unknown type',
    key: 'kinds/blob.xyz',
    content: '<script>alert(1)</script>',
    served: 'application/octet-stream',
    inline: false,
  },
  {
    name: 'a declared unknown type',
    key: 'kinds/thing',
    content: '<script>alert(1)</script>',
    contentType: 'application/x-parley-test',
    served: 'application/x-parley-test',
    inline: false,
  },
];

function header(headers: Headers | http.IncomingHttpHeaders, name: string): string | undefined {
  const value = headers instanceof Headers ? headers.get(name) : headers[name];
  return typeof value === 'string' ? value : undefined;
}

function assertSandboxed(headers: Headers | http.IncomingHttpHeaders, what: string): void {
  assert.equal(header(headers, 'x-content-type-options'), 'nosniff', what);
  assert.equal(header(headers, 'content-security-policy'), SANDBOX, what);
}

/** A request to the server at `base` as a browser sends it to `host` (a name that need not resolve). */
function requestAs(
  base: string,
  host: string,
  pathAndQuery: string,
  init: { method?: string; body?: string } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = http.request(
      { hostname, port, path: pathAndQuery, method: init.method ?? 'GET', headers: { host } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: Buffer.concat(chunks).toString(),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(init.body);
  });
}

const pathOf = (url: string) => {
  const u = new URL(url);
  return `${u.pathname}${u.search}`;
};

for (const store of await testStores()) {
  describe(`file contents served to browsers (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store);
      bot = await createTestBot(t, 'served');
    });
    after(() => t?.close());

    for (const kind of KINDS) {
      test(`${kind.name}: nosniff, sandboxed, ${kind.inline ? 'shown inline' : 'an attachment'}`, async () => {
        await bot.client.uploadFile({
          key: kind.key,
          content: kind.content,
          ...(kind.contentType && { contentType: kind.contentType }),
        });
        const { file } = await bot.client.getFile({ id: kind.key });
        for (const [what, url] of [
          ['signed', file.url],
          ['public', await publicUrlOf(kind.key)],
        ] as const) {
          const res = await fetch(url);
          assert.equal(res.status, 200, `${what} ${kind.key}`);
          assert.equal(res.headers.get('content-type'), kind.served, `${what} ${kind.key}`);
          assertSandboxed(res.headers, `${what} ${kind.key}`);
          const disposition = res.headers.get('content-disposition') ?? '';
          const name = kind.key.split('/').pop() ?? '';
          assert.equal(disposition, `${kind.inline ? 'inline' : 'attachment'}; filename*=UTF-8''${name}`);
          assert.deepEqual(Buffer.from(await res.arrayBuffer()), Buffer.from(kind.content));
        }
      });
    }

    /** The permanent URL the file would have with the `public_content` policy (set, then read). */
    async function publicUrlOf(key: string): Promise<string> {
      const { file } = await bot.client.updateFileMetadata({ id: key, accessPolicies: ['public_content'] });
      return file.url;
    }

    test('ranges, 304s and errors carry the same headers', async () => {
      await bot.client.uploadFile({ key: 'ranged.html', content: '<b>0123456789</b>' });
      const { file } = await bot.client.getFile({ id: 'ranged.html' });
      const part = await fetch(file.url, { headers: { range: 'bytes=3-6' } });
      assert.equal(part.status, 206);
      assert.equal(await part.text(), '0123');
      assertSandboxed(part.headers, 'a range');
      assert.match(part.headers.get('content-disposition') ?? '', /^attachment;/);
      const etag = part.headers.get('etag') ?? '';
      const cached = await fetch(file.url, { headers: { 'if-none-match': etag } });
      assert.equal(cached.status, 304);
      assertSandboxed(cached.headers, 'a 304');
      const unsigned = new URL(file.url);
      unsigned.search = '';
      const refused = await fetch(unsigned);
      assert.equal(refused.status, 403);
      assertSandboxed(refused.headers, 'a 403');
      const missing = await fetch(`${t.url}/file-content/public/file_nope`);
      assert.equal(missing.status, 404);
      assertSandboxed(missing.headers, 'a 404');
      await missing.arrayBuffer();
    });

    test('a file name with quotes and parentheses stays one token of the disposition', async () => {
      await bot.client.uploadFile({ key: `odd/it's (final)*.txt`, content: 'x' });
      const { file } = await bot.client.getFile({ id: `odd/it's (final)*.txt` });
      const res = await fetch(file.url);
      assert.equal(
        res.headers.get('content-disposition'),
        "inline; filename*=UTF-8''it%27s%20%28final%29%2A.txt",
      );
      await res.arrayBuffer();
    });
  });

  describe(`a content origin of its own, PARLEY_CONTENT_URL (${store.name})`, { skip: store.skip }, () => {
    // The content origin is another host name for the same server: requests are sent to the server's
    // address with that Host, as a browser sends them to a name that resolves to it.
    const CONTENT_HOST = 'content.parley.test';
    let t: TestServer;
    let bot: TestBot;
    before(async () => {
      t = await startTestServer(store, { contentUrl: `http://${CONTENT_HOST}` });
      bot = await createTestBot(t, 'content-origin');
    });
    after(() => t?.close());

    /** uploadFile's two steps, the PUT sent to the content origin. */
    async function upload(key: string, content: string): Promise<void> {
      const { file } = await bot.client.upsertFile({ key, size: Buffer.byteLength(content) });
      const put = await requestAs(t.url, CONTENT_HOST, pathOf(file.uploadUrl), {
        method: 'PUT',
        body: content,
      });
      assert.equal(put.status, 200, put.body);
    }

    test('the URLs handed out point at the content origin; uploads are taken there', async () => {
      const { file } = await bot.client.upsertFile({ key: 'page.html', size: 16 });
      assert.equal(new URL(file.uploadUrl).origin, `http://${CONTENT_HOST}`);
      assert.equal(new URL(file.url).origin, `http://${CONTENT_HOST}`);
      const upload = await requestAs(t.url, CONTENT_HOST, pathOf(file.uploadUrl), {
        method: 'PUT',
        body: '<h1>hello</h1>\n\n',
      });
      assert.equal(upload.status, 200, upload.body);
      const { file: pub } = await bot.client.updateFileMetadata({
        id: 'page.html',
        accessPolicies: ['public_content'],
      });
      assert.equal(new URL(pub.url).origin, `http://${CONTENT_HOST}`);
    });

    test('there, any declared type is shown inline, still nosniff and sandboxed; bytes of unknown type are saved', async () => {
      await upload('shown.html', '<h1>shown</h1>');
      const { file } = await bot.client.getFile({ id: 'shown.html' });
      const html = await requestAs(t.url, CONTENT_HOST, pathOf(file.url));
      assert.equal(html.status, 200);
      assert.equal(html.body, '<h1>shown</h1>');
      assert.equal(html.headers['content-type'], 'text/html');
      assert.equal(html.headers['content-disposition'], "inline; filename*=UTF-8''shown.html");
      assertSandboxed(html.headers, 'HTML on the content origin');
      await upload('bytes.bin', '\u0001\u0002\u0003');
      const { file: bytes } = await bot.client.getFile({ id: 'bytes.bin' });
      const saved = await requestAs(t.url, CONTENT_HOST, pathOf(bytes.url));
      assert.match(saved.headers['content-disposition'] ?? '', /^attachment;/);
    });

    test('the main origin serves no content: it redirects reads to the content origin, and still takes uploads', async () => {
      await upload('moved.svg', '<svg xmlns="http://www.w3.org/2000/svg"/>');
      const { file } = await bot.client.getFile({ id: 'moved.svg' });
      const onMain = await fetch(`${t.url}${pathOf(file.url)}`, { redirect: 'manual' });
      assert.equal(onMain.status, 307);
      assert.equal(onMain.headers.get('location'), file.url);
      assert.equal(await onMain.text(), '');
      const head = await fetch(`${t.url}${pathOf(file.url)}`, { method: 'HEAD', redirect: 'manual' });
      assert.equal(head.status, 307);
      // An upload URL handed out before the setting (on the main origin) keeps working.
      const { file: late } = await bot.client.upsertFile({ key: 'late.txt', size: 4 });
      const put = await fetch(`${t.url}${pathOf(late.uploadUrl)}`, { method: 'PUT', body: 'late' });
      assert.equal(put.status, 200);
    });

    test('the content origin serves nothing but file contents', async () => {
      for (const path of [
        '/console/',
        '/',
        '/s/anything',
        '/v1/files',
        '/webchat/v1/inject.js',
        '/healthz',
        '//console/',
      ]) {
        const res = await requestAs(t.url, CONTENT_HOST, path);
        assert.equal(res.status, 404, path);
        assert.equal((JSON.parse(res.body) as { type: string }).type, 'ResourceNotFound', path);
      }
      // The main origin is unchanged.
      assert.equal((await fetch(`${t.url}/healthz`)).status, 200);
    });

    test('the content origin must be an origin, and not the public one', async () => {
      await assert.rejects(
        startTestServer(store, { contentUrl: 'http://files.example/path' }),
        /PARLEY_CONTENT_URL takes an origin/,
      );
      await assert.rejects(
        startTestServer(store, { contentUrl: 'ftp://files.example' }),
        /PARLEY_CONTENT_URL takes an origin/,
      );
      await assert.rejects(
        startTestServer(store, {
          contentUrl: 'https://parley.example',
          publicUrl: 'https://parley.example/',
        }),
        /another origin/,
      );
    });
  });
}

test('PARLEY_CONTENT_URL must be an http(s) origin, and not the public one', () => {
  for (const contentUrl of ['http://files.example/path', 'ftp://files.example', 'files.example', 'http://']) {
    assert.throws(() => buildConfig({ contentUrl }), /PARLEY_CONTENT_URL takes an origin/, contentUrl);
  }
  assert.throws(
    () => buildConfig({ contentUrl: 'https://parley.example', publicUrl: 'https://parley.example/' }),
    /another origin/,
  );
  assert.equal(buildConfig({ contentUrl: 'https://Files.Example/' }).contentUrl, 'https://files.example');
});
