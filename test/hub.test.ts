import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { Client, isApiError } from '@botpress/client';
import { unique, unknownId } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { CLI7_HEADERS } from './replays/cli7-deploy-bot.ts';

/**
 * The local hub (issue 34): Parley's built-in integrations under their usual names and versions, and
 * the integrations, interfaces and plugins workspaces deploy, each its workspace's own until the
 * server's operator (the account of first start) publishes it. Through the official client, on both
 * stores.
 */

/** The error type a call fails with (and its message), or a failure when it succeeds. */
async function failure(call: Promise<unknown>): Promise<{ type: string; message: string }> {
  try {
    await call;
  } catch (err) {
    if (isApiError(err)) return { type: err.type, message: err.message };
    throw err;
  }
  assert.fail('the call succeeded');
}

for (const store of await testStores()) {
  describe(`the local hub (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    /** The operator, in the first workspace. */
    let operator: Client;
    /** A developer of the first workspace: deploys, but publishes nothing. */
    let developer: Client;
    let viewer: Client;
    /** An account of another workspace (its owner, not the server's operator). */
    let stranger: Client;
    /** The same account as CLI 7 makes its client: `x-multiple-integrations: true`. */
    let strangerCli7: Client;

    before(async () => {
      t = await startTestServer(store);
      operator = t.client();
      const tokenOf = async (email: string) => {
        const account = await t.server.domain.accounts.getOrCreateByEmail(email);
        return (await t.server.domain.accounts.createToken(account.id, 'hub test')).value;
      };
      const member = async (role: 'developer' | 'viewer') => {
        const email = `${unique(role)}@example.com`;
        await operator.createWorkspaceMember({ email, role });
        return t.client({ token: await tokenOf(email) });
      };
      developer = await member('developer');
      viewer = await member('viewer');
      const strangerToken = await tokenOf(`${unique('stranger')}@example.com`);
      const { id } = await new Client({ apiUrl: t.url, token: strangerToken }).createWorkspace({
        name: 'other',
      });
      stranger = new Client({ apiUrl: t.url, token: strangerToken, workspaceId: id });
      strangerCli7 = new Client({
        apiUrl: t.url,
        token: strangerToken,
        workspaceId: id,
        headers: CLI7_HEADERS,
      });
    });
    after(() => t.close());

    test('the built-ins: every lookup finds chat (1.0.0 and the ADK’s 0.7.3), webchat, llm and hitl', async () => {
      // The workspace's lookups (the CLI's first) and the hub's, from any workspace.
      assert.equal((await stranger.getIntegration({ id: 'chat' })).integration.version, '1.0.0');
      assert.equal((await stranger.getIntegration({ id: 'chat@0.7.3' })).integration.version, '0.7.3');
      const byName = async (version: string) =>
        (await stranger.getIntegrationByName({ name: 'chat', version })).integration.version;
      assert.equal(await byName('0.7.3'), '0.7.3');
      assert.equal(await byName('latest'), '1.0.0', 'latest: the highest version');
      assert.equal(
        await byName('>=0.0.0 <1.0.0'),
        '0.7.3',
        'a range as the SDK’s allWithinMajorOf writes it',
      );
      assert.equal(
        (await failure(stranger.getIntegrationByName({ name: 'chat', version: '0.7.4' }))).type,
        'ResourceNotFound',
      );

      const hub = async (name: string, version: string) =>
        (await stranger.getPublicIntegration({ name, version })).integration;
      assert.equal((await hub('webchat', '0.3.0')).id, 'webchat');
      const llm = await hub('llm', 'latest');
      assert.equal(llm.version, '11.0.0');
      const hitl = await hub('hitl', '2.1.0');
      assert.deepEqual(Object.keys(hitl.actions).sort(), ['createUser', 'startHitl', 'stopHitl']);
      // The interfaces each implements, under the interface's own names (what `.addPlugin` wires).
      assert.deepEqual(hitl.interfaces.hitl, {
        id: 'hitl@2.1.0',
        name: 'hitl',
        version: '2.1.0',
        entities: { hitlSession: { name: 'hitlSession' } },
        actions: {
          createUser: { name: 'createUser' },
          startHitl: { name: 'startHitl' },
          stopHitl: { name: 'stopHitl' },
        },
        events: { hitlAssigned: { name: 'hitlAssigned' }, hitlStopped: { name: 'hitlStopped' } },
        channels: { hitl: { name: 'hitl' } },
      });
      assert.deepEqual(
        [llm.interfaces.llm?.version, Object.keys(llm.interfaces.llm?.actions ?? {})],
        ['11.0.0', ['generateContent', 'listLanguageModels']],
      );
      assert.equal((await stranger.getPublicIntegrationById({ id: 'hitl' })).integration.name, 'hitl');
      assert.equal(
        (await stranger.getPublicIntegration({ name: 'chat', version: '0.7.3' })).integration.public,
        true,
      );

      const listed = (await stranger.listPublicIntegrations({})).integrations.map(
        (i) => `${i.name}@${i.version}`,
      );
      for (const builtIn of ['chat@1.0.0', 'chat@0.7.3', 'webchat@0.3.0', 'llm@11.0.0', 'hitl@2.1.0'])
        assert.ok(listed.includes(builtIn), `${builtIn} is listed`);

      // What a bot's `integrations` shows is the hub's: one declaration.
      const { bot } = await operator.createBot({ name: 'shows chat' });
      assert.equal((await operator.getBot({ id: bot.id })).bot.integrations.chat?.version, '1.0.0');
    });

    test('the built-in interfaces: every lookup finds hitl 2.1.0 and llm 11.0.0, as the built-in integrations declare them', async () => {
      // The hub's lookups (`bp add hitl`), the workspace's (the CLI's first), by id and by name.
      const hitl = (await stranger.getPublicInterface({ name: 'hitl', version: 'latest' })).interface;
      const declared = (await stranger.getPublicIntegration({ name: 'hitl', version: '2.1.0' })).integration
        .interfaces.hitl;
      assert.deepEqual([hitl.id, hitl.version, hitl.public], [declared?.id, '2.1.0', true]);
      assert.deepEqual(
        [
          Object.keys(hitl.entities),
          Object.keys(hitl.actions),
          Object.keys(hitl.events),
          Object.keys(hitl.channels),
        ],
        [['hitlSession'], ['createUser', 'startHitl', 'stopHitl'], ['hitlAssigned', 'hitlStopped'], ['hitl']],
      );
      assert.deepEqual(Object.keys(hitl.channels.hitl?.messages ?? {}), [
        'text',
        'image',
        'audio',
        'video',
        'file',
        'bloc',
      ]);
      const llm = (await stranger.getPublicInterfaceById({ id: 'llm@11.0.0' })).interface;
      assert.deepEqual(
        [llm.name, Object.keys(llm.entities), Object.keys(llm.actions)],
        ['llm', ['modelRef'], ['generateContent', 'listLanguageModels']],
      );
      assert.equal((await stranger.getInterface({ id: 'hitl@2.1.0' })).interface.name, 'hitl');
      assert.equal(
        (await stranger.getInterfaceByName({ name: 'llm', version: '>=11.0.0 <12.0.0' })).interface.id,
        'llm@11.0.0',
        'a range as the SDK’s allWithinMajorOf writes it',
      );
      assert.equal(
        (await failure(stranger.getPublicInterface({ name: 'hitl', version: '3.0.0' }))).type,
        'ResourceNotFound',
      );
      const listed = (await stranger.listPublicInterfaces({})).interfaces.map((i) => i.id);
      assert.ok(listed.includes('hitl@2.1.0') && listed.includes('llm@11.0.0'), 'both are listed');
      assert.deepEqual(
        (await stranger.listPublicInterfaces({ name: 'llm' })).interfaces.map((i) => i.id),
        ['llm@11.0.0'],
      );

      // A plugin depends on them, and an integration implements them, from any workspace.
      const { plugin } = await stranger.createPlugin({
        name: unique('hitl-plugin').toLowerCase(),
        version: '1.0.0',
        code: { node: 'module.exports = {}', browser: 'export default {}' },
        dependencies: { interfaces: { hitl: { name: 'hitl', version: '>=2.0.0 <3.0.0' } }, integrations: {} },
      });
      assert.deepEqual(plugin.dependencies.interfaces.hitl, {
        id: 'hitl@2.1.0',
        name: 'hitl',
        version: '2.1.0',
      });
      const { integration } = await stranger.createIntegration({
        name: unique('zendesk').toLowerCase(),
        version: '1.0.0',
        interfaces: { hitl: { id: 'hitl@2.1.0', entities: {}, actions: {}, events: {}, channels: {} } },
      });
      assert.equal(integration.interfaces.hitl?.version, '2.1.0');

      // Their names are taken, and a built-in is no workspace's to change.
      for (const name of ['hitl', 'llm'])
        assert.equal(
          (await failure(developer.createInterface({ name, version: '99.0.0' }))).type,
          'AlreadyExists',
          `${name} is a built-in's name`,
        );
      assert.equal(
        (await failure(operator.updateInterface({ id: 'hitl@2.1.0', title: 'mine' }))).type,
        'ResourceNotFound',
      );
    });

    test('a bot of another workspace installs an integration once it is published, by alias as CLI 7 does', async () => {
      const name = unique('slack').toLowerCase();
      const { integration } = await developer.createIntegration({ name, version: '1.0.0' });
      const byAlias = strangerCli7;
      const { bot } = await byAlias.createBot({ name: 'installs slack' });
      const install = () =>
        byAlias.updateBot({
          id: bot.id,
          integrations: { slack: { integrationId: integration.id, enabled: true, configuration: {} } },
        });
      const before = await failure(install());
      assert.equal(before.type, 'ReferenceNotFound', 'a private integration is its workspace’s alone');
      assert.match(before.message, /integrations\.slack\.integrationId/);

      await operator.updateIntegration({ id: integration.id, visibility: 'public' });
      const installed = (await install()).bot.integrations.slack;
      assert.equal(installed?.id, integration.id);
      assert.equal(installed?.name, name);

      // Its workspace cannot delete it from under the other's bot, nor learn which bot that is.
      const kept = await failure(developer.deleteIntegration({ id: integration.id }));
      assert.equal(kept.type, 'InvalidPayload');
      assert.match(kept.message, /a bot of another workspace/);
      assert.doesNotMatch(kept.message, new RegExp(bot.id));
    });

    test('a deployed integration is its workspace’s until the operator publishes it; latest is the highest semver', async () => {
      const name = unique('telegram').toLowerCase();
      const { integration } = await developer.createIntegration({
        name,
        version: '1.9.0',
        visibility: 'private',
      });
      assert.equal(integration.public, false);
      assert.equal(
        (await developer.getIntegrationByName({ name, version: 'latest' })).integration.id,
        integration.id,
      );
      for (const call of [
        () => stranger.getIntegration({ id: integration.id }),
        () => stranger.getIntegrationByName({ name, version: '1.9.0' }),
        () => stranger.getPublicIntegration({ name, version: '1.9.0' }),
        () => stranger.getPublicIntegrationById({ id: integration.id }),
      ])
        assert.equal((await failure(call())).type, 'ResourceNotFound');

      // Only the operator publishes, or takes back.
      const refused = await failure(
        developer.updateIntegration({ id: integration.id, visibility: 'public' }),
      );
      assert.equal(refused.type, 'Forbidden');
      assert.match(refused.message, /^visibility: /);
      const refusedCreate = await failure(
        developer.createIntegration({ name, version: '2.0.0', public: true }),
      );
      assert.equal(refusedCreate.type, 'Forbidden');
      assert.match(refusedCreate.message, /^public: /);
      assert.equal(
        (await operator.updateIntegration({ id: integration.id, visibility: 'public' })).integration.public,
        true,
      );
      assert.equal(
        (await failure(developer.updateIntegration({ id: integration.id, visibility: 'private' }))).type,
        'Forbidden',
      );
      // A redeploy that keeps what it is changes it, whoever sends it.
      await developer.updateIntegration({ id: integration.id, visibility: 'public', title: 'Telegram' });

      const found = (await stranger.getPublicIntegration({ name, version: '1.9.0' })).integration;
      assert.deepEqual([found.id, found.title, found.visibility], [integration.id, 'Telegram', 'public']);
      assert.equal((await stranger.getPublicIntegrationById({ id: integration.id })).integration.name, name);
      const page = await stranger.listPublicIntegrations({ name });
      assert.deepEqual(
        page.integrations.map((i) => i.id),
        [integration.id],
      );
      // Still not the stranger's workspace's own.
      assert.equal((await failure(stranger.getIntegration({ id: integration.id }))).type, 'ResourceNotFound');

      // latest: semver's order, not the text's (1.10.0 above 1.9.0).
      const newer = await operator.createIntegration({ name, version: '1.10.0', visibility: 'public' });
      assert.equal(
        (await stranger.getPublicIntegration({ name, version: 'latest' })).integration.id,
        newer.integration.id,
      );
      assert.equal(
        (await stranger.getPublicIntegration({ name, version: '~1.9.0' })).integration.id,
        integration.id,
      );

      // A built-in's name is not published by a workspace.
      const taken = await failure(
        operator.createIntegration({ name: 'chat', version: '9.0.0', visibility: 'public' }),
      );
      assert.equal(taken.type, 'AlreadyExists');
    });

    test('an interface: an integration claiming it is accepted, one claiming a missing one refused naming the field', async () => {
      const name = unique('translator').toLowerCase();
      const action = { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } };
      const { interface: created } = await developer.createInterface({
        name,
        version: '0.1.0',
        actions: { translate: action },
      });
      assert.equal(
        (await developer.getInterfaceByName({ name, version: 'latest' })).interface.id,
        created.id,
      );
      assert.deepEqual(Object.keys((await developer.getInterface({ id: created.id })).interface.actions), [
        'translate',
      ]);

      const claims = { tr: { id: created.id, actions: { translate: { name: 'translate' } } } };
      const { integration } = await developer.createIntegration({
        name: unique('implements').toLowerCase(),
        version: '1.0.0',
        interfaces: claims,
      });
      assert.deepEqual(
        [integration.interfaces.tr?.id, integration.interfaces.tr?.name, integration.interfaces.tr?.version],
        [created.id, name, '0.1.0'],
      );
      const missing = await failure(
        developer.createIntegration({
          name: unique('implements').toLowerCase(),
          version: '1.0.0',
          interfaces: { gone: { id: unknownId('intrver') } },
        }),
      );
      assert.equal(missing.type, 'InvalidPayload');
      assert.match(missing.message, /^interfaces\.gone\.id: /);

      // Another workspace may claim it once it is published (what `bp deploy` resolves with getPublicInterface).
      const elsewhere = { name: unique('elsewhere').toLowerCase(), version: '1.0.0', interfaces: claims };
      assert.equal((await failure(stranger.createIntegration(elsewhere))).type, 'InvalidPayload');
      assert.equal(
        (await failure(stranger.getPublicInterface({ name, version: '0.1.0' }))).type,
        'ResourceNotFound',
      );
      assert.equal(
        (await failure(developer.updateInterface({ id: created.id, public: true }))).type,
        'Forbidden',
      );
      await operator.updateInterface({ id: created.id, public: true });
      assert.equal(
        (await stranger.getPublicInterface({ name, version: '>=0.1.0 <1.0.0' })).interface.id,
        created.id,
      );
      assert.equal((await stranger.getPublicInterfaceById({ id: created.id })).interface.public, true);
      assert.ok((await stranger.listPublicInterfaces({})).interfaces.some((i) => i.id === created.id));
      await stranger.createIntegration(elsewhere);
    });

    test('a plugin: stored as CLI 7 sends it, found by name and version, and through the hub once public', async () => {
      const ifaceName = unique('dep').toLowerCase();
      await developer.createInterface({ name: ifaceName, version: '2.1.0' });
      const name = unique('greeter').toLowerCase();
      const code = { node: 'module.exports = { plugin: 1 }', browser: 'export default { plugin: 1 }' };
      const { plugin } = await developer.createPlugin({
        name,
        version: '1.0.0',
        title: 'Greeter',
        code,
        visibility: 'private',
        states: { seen: { type: 'user', schema: { type: 'object' } } },
        user: { tags: { greeted: { title: 'Greeted' } } },
        dependencies: {
          interfaces: { hitl: { name: ifaceName, version: '>=2.0.0 <3.0.0' } },
          integrations: { chat: { name: 'chat', version: '0.7.3' } },
        },
      });
      assert.equal(plugin.dependencies.interfaces.hitl?.version, '2.1.0');
      assert.deepEqual(plugin.dependencies.integrations.chat, {
        id: 'chat@0.7.3',
        name: 'chat',
        version: '0.7.3',
      });
      assert.deepEqual(Object.keys(plugin.user.tags), ['greeted']);
      const byName = (await developer.getPluginByName({ name, version: 'latest' })).plugin;
      assert.deepEqual([byName.id, byName.title, byName.visibility], [plugin.id, 'Greeter', 'private']);
      assert.equal((await developer.getPluginCode({ id: plugin.id, platform: 'node' })).code, code.node);
      assert.equal(
        (await developer.getPluginCode({ id: plugin.id, platform: 'browser' })).code,
        code.browser,
      );
      assert.deepEqual(
        (await developer.listPlugins({ name })).plugins.map((p) => p.id),
        [plugin.id],
      );

      const missing = await failure(
        developer.createPlugin({
          name: unique('broken').toLowerCase(),
          version: '1.0.0',
          code,
          dependencies: { integrations: { nope: { name: 'no-such-integration', version: '1.0.0' } } },
        }),
      );
      assert.equal(missing.type, 'InvalidPayload');
      assert.match(missing.message, /^dependencies\.integrations\.nope: /);

      assert.equal(
        (await failure(stranger.getPublicPlugin({ name, version: '1.0.0' }))).type,
        'ResourceNotFound',
      );
      assert.equal(
        (await failure(developer.updatePlugin({ id: plugin.id, visibility: 'public' }))).type,
        'Forbidden',
      );
      await operator.updatePlugin({ id: plugin.id, visibility: 'public', states: { seen: null } });
      const published = (await stranger.getPublicPlugin({ name, version: 'latest' })).plugin;
      assert.deepEqual(
        [published.id, published.public, Object.keys(published.states)],
        [plugin.id, true, []],
      );
      assert.equal((await stranger.getPublicPluginById({ id: plugin.id })).plugin.name, name);
      assert.equal((await stranger.getPublicPluginCode({ id: plugin.id, platform: 'node' })).code, code.node);
      assert.deepEqual(
        (await stranger.listPublicPlugins({ name })).plugins.map((p) => p.id),
        [plugin.id],
      );
    });

    test('roles: a viewer deploys nothing (403); another workspace’s records are not found (404)', async () => {
      const code = { node: '', browser: '' };
      for (const call of [
        () => viewer.createInterface({ name: unique('v').toLowerCase(), version: '1.0.0' }),
        () => viewer.createPlugin({ name: unique('v').toLowerCase(), version: '1.0.0', code }),
        () => viewer.createIntegration({ name: unique('v').toLowerCase(), version: '1.0.0' }),
      ])
        assert.equal((await failure(call())).type, 'Forbidden');
      const iface = (
        await developer.createInterface({ name: unique('mine').toLowerCase(), version: '1.0.0' })
      ).interface;
      const plugin = (
        await developer.createPlugin({ name: unique('mine').toLowerCase(), version: '1.0.0', code })
      ).plugin;
      assert.equal((await viewer.getInterface({ id: iface.id })).interface.id, iface.id, 'a viewer reads');
      for (const call of [
        () => stranger.getInterface({ id: iface.id }),
        () => stranger.updateInterface({ id: iface.id, title: 'mine now' }),
        () => stranger.deleteInterface({ id: iface.id }),
        () => stranger.getPlugin({ id: plugin.id }),
        () => stranger.getPluginCode({ id: plugin.id, platform: 'node' }),
        () => stranger.deletePlugin({ id: plugin.id }),
      ])
        assert.equal((await failure(call())).type, 'ResourceNotFound');
      await developer.deleteInterface({ id: iface.id });
      await developer.deletePlugin({ id: plugin.id });
      assert.equal((await failure(developer.getPlugin({ id: plugin.id }))).type, 'ResourceNotFound');
    });

    /**
     * What CLI 7's `bp deploy` asks after "Bot deployed": `displayIntegrationUrls` looks up each
     * integration of the bot by id, in the workspace, then in the hub (`getPublicOrPrivateIntegration`).
     * Replayed from botpress/botpress at 4f4a05a0c427ce1fac9d7859a89bb995106051ac:
     * packages/cli/src/command-implementations/project-command.ts (displayIntegrationUrls) and
     * packages/cli/src/api/client.ts (findPrivateIntegration, findPublicIntegration).
     */
    test('CLI 7’s displayIntegrationUrls finds every integration of a bot with the chat integration', async () => {
      const { bot } = await developer.createBot({ name: 'deployed' });
      const { integrations } = (await developer.getBot({ id: bot.id })).bot;
      assert.ok(integrations.chat, 'the bot has the chat integration');
      const notFoundAsUndefined = (err: unknown) => {
        if (isApiError(err) && err.type === 'ResourceNotFound') return undefined;
        throw err;
      };
      for (const [alias, installed] of Object.entries(integrations)) {
        const definition =
          (await developer.getIntegration({ id: installed.id }).catch(notFoundAsUndefined)) ??
          (await developer.getPublicIntegrationById({ id: installed.id }).catch(notFoundAsUndefined));
        assert.ok(definition, `Integration "${installed.id}" not found (${alias}): the CLI would exit 1`);
        assert.equal(definition.integration.id, installed.id);
        // What it reads to print the links: the identifier's template, a sandbox's script (none here).
        assert.equal(typeof definition.integration.identifier, 'object');
      }
    });
  });
}
