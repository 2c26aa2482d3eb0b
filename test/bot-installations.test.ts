// Integrations installed on a bot by alias, as every `bp` since 4.20 sends them (`x-multiple-integrations:
// true`, `integrations: { <alias>: { integrationId, ... } }`), beside the id-keyed form of older CLIs;
// plugins kept by alias with their wiring; an installation's events named `<alias>:<type>`. Through the
// official client, on both stores. (Running the installations' bundles: test/e2e/sdk-bot-aliases.test.ts.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ReferenceNotFoundError } from '@botpress/client';
import type { Client } from '@botpress/client';
import { rejectsWith, unique, unknownId } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';
import { CLI7_HEADERS } from './replays/cli7-deploy-bot.ts';

type UpdateBot = Parameters<Client['updateBot']>[0];

for (const store of await testStores()) {
  describe(`installations by alias (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    /** The client as CLI 7 makes it: the official one, with `x-multiple-integrations: true`. */
    let byAlias: Client;
    let byId: Client;
    let integrationId: string;
    let integrationName: string;

    before(async () => {
      t = await startTestServer(store);
      byAlias = t.client({ headers: CLI7_HEADERS });
      byId = t.client();
      integrationName = unique('webhook').toLowerCase();
      ({
        integration: { id: integrationId },
      } = await byId.createIntegration({
        name: integrationName,
        version: '1.0.0',
        events: { event: { schema: { type: 'object' } } },
        configurations: { sandbox: { schema: { type: 'object' } } },
      }));
    });
    after(() => t?.close());

    const newBot = async () => (await byId.createBot({ name: unique('aliases') })).bot.id;

    test('one integration under two aliases: each its own configuration and webhook; getBot keyed by alias with the header, by id without', async () => {
      const botId = await newBot();
      const { bot } = await byAlias.updateBot({
        id: botId,
        integrations: {
          webhook: { integrationId, enabled: true, configuration: { label: 'first' } },
          second: {
            integrationId,
            enabled: false,
            configuration: { label: 'second' },
            configurationType: 'sandbox',
            disabledChannels: ['channel'],
          },
        },
      });
      const { webhook, second } = bot.integrations;
      assert.ok(webhook && second, `both aliases: ${Object.keys(bot.integrations).join(', ')}`);
      for (const installed of [webhook, second]) {
        assert.equal(installed.id, integrationId);
        assert.equal(installed.name, integrationName);
        assert.equal(installed.version, '1.0.0');
      }
      assert.deepEqual(webhook.configuration, { label: 'first' });
      assert.deepEqual(second.configuration, { label: 'second' });
      assert.equal(webhook.enabled, true);
      assert.equal(second.enabled, false);
      assert.equal(webhook.configurationType, null);
      assert.equal(second.configurationType, 'sandbox');
      assert.deepEqual(second.disabledChannels, ['channel']);
      assert.notEqual(webhook.webhookId, second.webhookId, 'a webhook each');
      assert.ok(bot.integrations.chat && bot.integrations.llm, 'the built-ins are still there');

      // Without the header the keys are integration ids, as older clients read them.
      const old = (await byId.getBot({ id: botId })).bot.integrations;
      assert.equal(old.webhook, undefined);
      assert.equal(old[integrationId]?.id, integrationId);
      // Installed together: the first alias in order shows.
      assert.deepEqual(old[integrationId]?.configuration, { label: 'second' });

      // A change of one alias leaves the other as it was.
      const changed = await byAlias.updateBot({
        id: botId,
        integrations: { second: { enabled: true } },
      });
      assert.equal(changed.bot.integrations.second?.enabled, true);
      assert.deepEqual(changed.bot.integrations.second?.configuration, { label: 'second' });
      assert.deepEqual(changed.bot.integrations.webhook?.configuration, { label: 'first' });
    });

    test('an unknown integrationId is refused naming integrations.<alias>.integrationId, and nothing of the update is applied', async () => {
      const botId = await newBot();
      const missing = unknownId('intver');
      const err = await rejectsWith(
        byAlias.updateBot({
          id: botId,
          name: 'renamed',
          integrations: {
            webhook: { integrationId, enabled: true, configuration: {} },
            other: { integrationId: missing, enabled: true, configuration: {} },
          },
        }),
        ReferenceNotFoundError,
      );
      assert.equal(err.code, 400);
      assert.match(err.message, /integrations\.other\.integrationId/);
      assert.match(err.message, new RegExp(missing));
      const untouched = (await byAlias.getBot({ id: botId })).bot;
      assert.notEqual(untouched.name, 'renamed');
      assert.equal(untouched.integrations.webhook, undefined);

      // A new alias needs its integration; a built-in keeps its own name.
      const noId = await rejectsWith(
        byAlias.updateBot({ id: botId, integrations: { lone: { enabled: true } } }),
        InvalidPayloadError,
      );
      assert.match(noId.message, /integrations\.lone\.integrationId/);
      const builtIn = await rejectsWith(
        byAlias.updateBot({
          id: botId,
          integrations: { desk: { integrationId: 'hitl', enabled: true, configuration: {} } },
        }),
        InvalidPayloadError,
      );
      assert.match(builtIn.message, /integrations\.desk\.integrationId/);
      const taken = await rejectsWith(
        byAlias.updateBot({
          id: botId,
          integrations: { hitl: { integrationId, enabled: true, configuration: {} } },
        }),
        InvalidPayloadError,
      );
      assert.match(taken.message, /integrations\.hitl/);
    });

    test('null uninstalls one alias and leaves the other; the id-keyed form installs under the name and changes every alias', async () => {
      const botId = await newBot();
      await byAlias.updateBot({
        id: botId,
        integrations: {
          webhook: { integrationId, enabled: true, configuration: { label: 'first' } },
          second: { integrationId, enabled: true, configuration: { label: 'second' } },
        },
      });
      const { bot } = await byAlias.updateBot({ id: botId, integrations: { webhook: null } });
      assert.equal(bot.integrations.webhook, undefined);
      assert.deepEqual(bot.integrations.second?.configuration, { label: 'second' });

      // Id-keyed: the installations of the integration change, whatever their alias.
      await byId.updateBot({
        id: botId,
        integrations: { [integrationId]: { configuration: { label: 'both' } } },
      });
      const after = (await byAlias.getBot({ id: botId })).bot.integrations;
      assert.deepEqual(after.second?.configuration, { label: 'both' });
      await byId.updateBot({ id: botId, integrations: { [integrationId]: null } });
      assert.equal((await byAlias.getBot({ id: botId })).bot.integrations.second, undefined);

      // A bot without it: id-keyed, it is installed under the integration's name.
      await byId.updateBot({
        id: botId,
        integrations: { [integrationId]: { enabled: true, configuration: {} } },
      });
      const named = (await byAlias.getBot({ id: botId })).bot.integrations[integrationName];
      assert.equal(named?.id, integrationId, 'under its name');
    });

    test('plugins by alias: kept with their wiring, answered by getBot, removed by null', async () => {
      const botId = await newBot();
      const { bot } = await byAlias.updateBot({
        id: botId,
        integrations: { webhook: { integrationId, enabled: true, configuration: {} } },
        plugins: {
          audit: {
            id: 'plugin_logger',
            configuration: { level: 'info' },
            interfaces: {
              sink: { integrationId, integrationAlias: 'webhook', integrationInterfaceAlias: 'out' },
            },
            integrations: { store: { integrationId, integrationAlias: 'webhook' } },
          },
        },
      });
      const audit = bot.plugins.audit;
      assert.ok(audit, 'the plugin, by its alias');
      assert.equal(audit.id, 'plugin_logger');
      assert.equal(audit.enabled, true);
      assert.deepEqual(audit.configuration, { level: 'info' });
      assert.deepEqual(audit.interfaces, {
        sink: { integrationId, integrationAlias: 'webhook', integrationInterfaceAlias: 'out' },
      });
      assert.deepEqual(audit.integrations, { store: { integrationId, integrationAlias: 'webhook' } });
      assert.equal(typeof audit.createdAt, 'string');

      const bad = await rejectsWith(
        byAlias.updateBot({
          id: botId,
          plugins: { other: { id: 'plugin_x', integrations: { store: { integrationId } } } },
          // The client's types refuse it too: the server must, naming the field.
        } as unknown as UpdateBot),
        InvalidPayloadError,
      );
      assert.match(bad.message, /plugins\.other\.integrations\.store\.integrationAlias/);

      const removed = await byAlias.updateBot({ id: botId, plugins: { audit: null } });
      assert.deepEqual(removed.bot.plugins, {});
    });

    test('an event an installation creates reaches the bot as <alias>:<type>; the bot’s own keep their type', async () => {
      const botId = await newBot();
      await byAlias.updateBot({
        id: botId,
        integrations: { second: { integrationId, enabled: true, configuration: {} } },
      });
      const asIntegration = t.client({ botId, headers: { 'x-integration-alias': 'second' } });
      const { event } = await asIntegration.createEvent({ type: 'event', payload: { n: 1 } });
      assert.equal(event.type, 'second:event');
      const asBot = t.client({ botId });
      const { event: own } = await asBot.createEvent({ type: 'event', payload: { n: 2 } });
      assert.equal(own.type, 'event');
      const listed = await asBot.listEvents({ type: 'second:event' });
      assert.deepEqual(
        listed.events.map((e) => e.id),
        [event.id],
      );
    });
  });
}
