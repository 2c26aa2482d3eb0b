// The webchat's browser side as a browser fetches it: the embed script, the hashed bundles, each bot's
// share page and the look the embed script reads; none of it in the API description.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { WEBCHAT_DIR } from '../src/api/webchat/assets.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { webchatClientId } from './helpers/webchat.ts';
import { outcomeOf, STORE_FAULT, withoutTable } from './helpers/store-failure.ts';

if (!existsSync(`${WEBCHAT_DIR}/manifest.json`)) {
  const build = spawnSync(process.execPath, ['scripts/build-webchat.mjs'], { encoding: 'utf8' });
  assert.equal(build.status, 0, build.stderr);
}

for (const store of await testStores()) {
  describe(`webchat embed script and share page (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let botId: string;
    let clientId: string;
    before(async () => {
      t = await startTestServer(store);
      ({
        bot: { id: botId },
      } = await t.client().createBot({ name: 'Support </script><b>bot</b>' }));
      clientId = await webchatClientId(t, botId);
    });
    after(() => t?.close());

    test('the embed script: JavaScript with a short cache (its address never changes), compressed', async () => {
      const res = await fetch(`${t.url}/webchat/v1/inject.js`, { headers: { 'accept-encoding': 'br' } });
      assert.equal(res.status, 200);
      assert.match(res.headers.get('content-type') ?? '', /javascript/);
      assert.equal(res.headers.get('cache-control'), 'public, max-age=300');
      assert.equal(res.headers.get('content-encoding'), 'br');
      assert.ok(res.headers.get('etag'));
      const text = await res.text();
      assert.match(text, /data-parley-webchat/);
      const manifest = await fetch(`${t.url}/webchat/v1/manifest.json`);
      assert.equal(manifest.status, 404, 'only the script and the bundles are served from the build');
      await manifest.arrayBuffer();
    });

    test('the share page: the bot’s name (escaped), its look, hashed bundles served immutable', async () => {
      const res = await fetch(`${t.url}/s/${clientId}`);
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('cache-control'), 'no-cache');
      const csp = res.headers.get('content-security-policy') ?? '';
      assert.match(csp, /script-src 'self';/, 'script from this server only, none inline');
      assert.match(csp, /object-src 'none'/);
      assert.match(csp, /base-uri 'none'/);
      assert.match(csp, /connect-src 'self';/);
      assert.match(csp, /frame-ancestors \*/, 'framed by the embed script on any site (no allowedOrigins)');
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff');
      const html = await res.text();
      assert.match(html, /<title>Support &#60;\/script&#62;&#60;b&#62;bot&#60;\/b&#62;<\/title>/);
      const config =
        /<script type="application\/json" id="parley-webchat-configuration">(.*?)<\/script>/.exec(html)?.[1];
      assert.ok(config, 'the page carries its configuration');
      assert.ok(!config.includes('</'), 'no text inside it ends the element');
      assert.deepEqual(JSON.parse(config), {
        clientId,
        configuration: { botName: 'Support </script><b>bot</b>', allowFileUpload: false },
      });
      const assets = [...html.matchAll(/(?:src|href)="(\/webchat\/v1\/assets\/[^"]+)"/g)].map(
        (m) => m[1] as string,
      );
      assert.equal(assets.length, 2, 'a script and a stylesheet');
      for (const asset of assets) {
        assert.match(asset, /-[A-Z0-9]{8}\.(js|css)$/, 'named by its content hash');
        const file = await fetch(`${t.url}${asset}`, { headers: { 'accept-encoding': 'gzip' } });
        assert.equal(file.status, 200);
        assert.equal(file.headers.get('cache-control'), 'public, max-age=31536000, immutable');
        assert.equal(file.headers.get('content-encoding'), 'gzip');
        await file.arrayBuffer();
      }
    });

    test('the bot’s look comes from its configuration; uploads stay off without a Files API', async () => {
      await t.client().updateBot({
        id: botId,
        integrations: {
          chat: {
            configuration: {
              webchat: {
                botName: 'Ada',
                color: '#0f766e',
                botAvatar: 'https://example.com/ada.png',
                allowFileUpload: true,
              },
            },
          },
        },
      });
      const res = await fetch(`${t.url}/webchat/${clientId}/config`, {
        headers: { origin: 'https://shop.example.com' },
      });
      assert.equal(
        res.headers.get('access-control-allow-origin'),
        '*',
        'the embed script reads it from any page',
      );
      assert.deepEqual(await res.json(), {
        clientId,
        configuration: {
          botName: 'Ada',
          color: '#0f766e',
          botAvatar: 'https://example.com/ada.png',
          allowFileUpload: false,
        },
      });
      const page = await (await fetch(`${t.url}/s/${clientId}`)).text();
      assert.match(page, /<title>Ada<\/title>/);
    });

    test('a frame on a page the allowed origins leave out is told why, not left blank', async () => {
      const shop = 'https://shop.example.com';
      await t.client().updateBot({
        id: botId,
        integrations: { chat: { configuration: { allowedOrigins: [shop] } } },
      });
      const framedFrom = (referer: string | undefined) =>
        fetch(`${t.url}/s/${clientId}?embedded`, {
          headers: { 'sec-fetch-dest': 'iframe', ...(referer && { referer }) },
        });

      const elsewhere = await framedFrom('https://blog.example.org/posts/1');
      assert.equal(elsewhere.status, 403);
      const csp = elsewhere.headers.get('content-security-policy') ?? '';
      assert.doesNotMatch(csp, /frame-ancestors/, 'the notice may show in any frame');
      assert.match(csp, /default-src 'none'/, 'text only: nothing runs or loads');
      const notice = await elsewhere.text();
      assert.match(notice, /This chat cannot be shown on https:\/\/blog\.example\.org\./);
      assert.match(notice, /allowedOrigins/);
      assert.doesNotMatch(notice, /shop\.example\.com/, 'the notice does not list the allowed origins');

      // An allowed page gets the chat, under the policy that keeps any other ancestor out.
      const allowed = await framedFrom(`${shop}/help`);
      assert.equal(allowed.status, 200);
      assert.match(
        allowed.headers.get('content-security-policy') ?? '',
        /frame-ancestors https:\/\/shop\.example\.com;/,
      );
      await allowed.arrayBuffer();
      // A page that sends no referrer, or a top-level visit: the policy alone decides.
      for (const res of [await framedFrom(undefined), await fetch(`${t.url}/s/${clientId}`)]) {
        assert.equal(res.status, 200);
        await res.arrayBuffer();
      }
      await t.client().updateBot({ id: botId, integrations: { chat: { configuration: {} } } });
    });

    test('an unknown client id has no share page; none of these routes is in the API description', async () => {
      const res = await fetch(`${t.url}/s/no-such-client`);
      assert.equal(res.status, 404);
      assert.match(res.headers.get('content-type') ?? '', /text\/html/);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/);
      await res.arrayBuffer();
      const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as { paths: Record<string, unknown> };
      const paths = Object.keys(doc.paths);
      assert.ok(paths.includes('/webchat/{clientId}/initialize'));
      assert.ok(!paths.some((p) => p.startsWith('/s/') || p.startsWith('/webchat/v1/')));
    });

    test('a share page whose channel the store cannot read answers the fault, not "no such page"', async () => {
      const unknown = randomUUID();
      const absent = await fetch(`${t.url}/s/${unknown}`);
      assert.equal(absent.status, 404);
      await absent.arrayBuffer();
      const failed = await withoutTable(t, 'chat_channels', () => fetch(`${t.url}/s/${unknown}`));
      assert.deepEqual(await outcomeOf(failed), STORE_FAULT);
    });
  });
}

describe('the share page with a content origin (PARLEY_CONTENT_URL)', () => {
  test('the page may send its uploads there, and connect nowhere else', async () => {
    const t = await startTestServer({ name: 'sqlite' }, { contentUrl: 'https://files.parley.test' });
    try {
      const { bot } = await t.client().createBot({ name: 'uploads' });
      const page = await fetch(`${t.url}/s/${await webchatClientId(t, bot.id)}`);
      assert.equal(page.status, 200);
      assert.match(
        page.headers.get('content-security-policy') ?? '',
        /connect-src 'self' https:\/\/files\.parley\.test;/,
      );
      await page.arrayBuffer();
    } finally {
      await t.close();
    }
  });
});
