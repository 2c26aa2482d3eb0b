// How the server hands out the web console: the page and its bundles, their caching, and what it does
// when the console was not built. The routes read no store: SQLite is enough.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify from 'fastify';
import { CONSOLE_DIR, consoleRoutes } from '../src/api/console/index.ts';
import { installErrorHandling } from '../src/api/errors.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';

describe('web console routes', () => {
  let t: TestServer;
  let page: string;
  before(async () => {
    if (!existsSync(path.join(CONSOLE_DIR, 'index.html'))) {
      const build = spawnSync(process.execPath, ['scripts/build-console.mjs'], { encoding: 'utf8' });
      assert.equal(build.status, 0, build.stderr);
    }
    t = await startTestServer({ name: 'sqlite' });
    page = await (await fetch(`${t.url}/console/`)).text();
  });
  after(() => t.close());

  const get = (url: string, headers: Record<string, string> = {}) =>
    fetch(`${t.url}${url}`, { headers, redirect: 'manual' });

  test('GET / and /console lead to the console', async () => {
    for (const url of ['/', '/console']) {
      const res = await get(url);
      assert.equal(res.status, 302, url);
      assert.equal(res.headers.get('location'), '/console/');
    }
  });

  test('every address under /console/ is the page, never cached, with a content security policy', async () => {
    for (const url of ['/console/', '/console/bots', '/console/bots/bot_1/conversations/conv_2?user=x']) {
      const res = await get(url);
      assert.equal(res.status, 200, url);
      assert.match(res.headers.get('content-type') ?? '', /^text\/html/);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /default-src 'self'/);
      assert.match(csp, /script-src 'self';/, 'script from this server only, none inline');
      assert.match(csp, /object-src 'none'/);
      assert.match(csp, /base-uri 'none'/);
      assert.match(csp, /frame-ancestors 'none'/);
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(await res.text(), page);
    }
    const head = await fetch(`${t.url}/console/members`, { method: 'HEAD' });
    assert.equal(head.status, 200);
  });

  test('the page loads its bundles by content-hashed names, cached for good, compressed when accepted', async () => {
    const assets = [...page.matchAll(/(?:src|href)="(\/console\/assets\/[^"]+)"/g)].map(
      (m) => m[1] as string,
    );
    // Its script, its stylesheet, and the chunks of script they share with screens loaded later (flow).
    const named = (name: string) => assets.filter((asset) => asset.includes(`/${name}-`));
    assert.equal(named('console').length, 2, `a script and a stylesheet: ${assets.join(', ')}`);
    assert.equal(named('console').length + named('chunk').length, assets.length, assets.join(', '));
    assert.deepEqual(named('flow'), [], 'the flow view loads when its tab opens');
    for (const asset of assets) {
      assert.match(asset, /\/(console|chunk)-[A-Z0-9]{8}\.(js|css)$/, 'named by content hash');
      const plain = await get(asset);
      assert.equal(plain.status, 200, asset);
      assert.equal(plain.headers.get('cache-control'), 'public, max-age=31536000, immutable');
      assert.match(
        plain.headers.get('content-type') ?? '',
        asset.endsWith('.js') ? /javascript/ : /text\/css/,
      );
      const size = (await plain.arrayBuffer()).byteLength;
      const brotli = await get(asset, { 'accept-encoding': 'br' });
      assert.equal(brotli.headers.get('content-encoding'), 'br');
      assert.ok(Number(brotli.headers.get('content-length')) < size / 2, 'the brotli copy is much smaller');
      assert.equal(brotli.headers.get('cache-control'), 'public, max-age=31536000, immutable');
    }
    assert.doesNotMatch(page, /(?:src|href)="(?:https?:)?\/\//, 'no external font, script or CDN');
  });

  test('an unknown bundle is a 404 with the error body, not the page', async () => {
    const res = await get('/console/assets/console-NOPE0000.js');
    assert.equal(res.status, 404);
    assert.equal(((await res.json()) as { type: string }).type, 'ResourceNotFound');
  });

  test('the console is not in the OpenAPI document', async () => {
    const doc = (await (await get('/openapi.json')).json()) as { paths: Record<string, unknown> };
    const paths = Object.keys(doc.paths);
    assert.ok(paths.length > 10);
    assert.deepEqual(
      paths.filter((p) => p === '/' || p.startsWith('/console')),
      [],
    );
  });

  test('a server without a built console says how to build it', async () => {
    const empty = await mkdtemp(path.join(os.tmpdir(), 'parley-no-console-'));
    const app = Fastify({ logger: false });
    installErrorHandling(app);
    await app.register(consoleRoutes, { root: empty });
    const res = await app.inject({ url: '/console/bots' });
    assert.equal(res.statusCode, 404);
    assert.match(res.json<{ message: string }>().message, /npm run build:console/);
    assert.equal((await app.inject({ url: '/' })).headers.location, '/console/');
    await app.close();
    await rm(empty, { recursive: true });
  });
});
