// Integrations written with @botpress/sdk 0.10 and deployed with the official `bp` CLI run on Parley:
// made with `bp init` from the CLI's own templates, deployed with `bp deploy` to a running server,
// installed on bots, reached through their webhook URL, and carrying a bot's conversation both ways.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { ResourceNotFoundError } from '@botpress/client';
import type { Client } from '@botpress/client';
import {
  chatUrlOf,
  deployIntegrationWithBp,
  deployWithBp,
  initBotProject,
  initIntegrationProject,
} from '../helpers/bp-cli.ts';
import type { BotProject, IntegrationProject } from '../helpers/bp-cli.ts';
import { ChatSession } from '../helpers/chat-bots.ts';
import { rejects4xx, rejectsWith, unique, unknownId, waitFor } from '../helpers/runtime.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { startReceiver } from '../helpers/webhooks.ts';

/** The integrations post to the test's receivers, on this host's loopback: the operator lets them. */
const RECEIVERS = '127.0.0.1';
import type { WebhookReceiver } from '../helpers/webhooks.ts';

/** The workspace handle the integrations' names carry: `bp deploy` claims it for the workspace. */
const HANDLE = 'acme';
const NAME = `${HANDLE}/webhook-message`;
const UNRULY = `${HANDLE}/unruly`;
const VERSION = '0.0.1';

/** The `webhook-message` template's definition, plus an action. */
const WEBHOOK_DEFINITION = `import { z, IntegrationDefinition } from '@botpress/sdk'
import { integrationName } from './package.json'

export default new IntegrationDefinition({
  name: integrationName,
  version: '${VERSION}',
  readme: 'hub.md',
  icon: 'icon.svg',
  configuration: {
    schema: z.object({
      webhookUrl: z.string().describe('The url to post the bot answers to.'),
    }),
  },
  channels: {
    webhook: {
      conversation: {
        tags: {
          id: { title: 'Conversation ID', description: 'The ID of the conversation' },
        },
      },
      messages: {
        text: { schema: z.object({ text: z.string() }) },
      },
    },
  },
  actions: {
    shout: {
      title: 'Shout',
      description: 'The text, upper-cased',
      input: { schema: z.object({ text: z.string() }) },
      output: { schema: z.object({ text: z.string() }) },
    },
  },
  user: {
    tags: {
      id: { title: 'User ID', description: 'The ID of the user' },
    },
  },
})
`;

/**
 * The `webhook-message` template's implementation, made to run: `register`/`unregister` tell the
 * configured URL (and never throw), the `text` message handler posts the bot's message there as
 * `{userId, conversationId, text}` (conversationId: the external id, the conversation's `id` tag), and
 * `shout` answers its input upper-cased. The webhook handler is the template's (a JSON body
 * `{userId, conversationId, text}` becomes a message of the end user); under `/inspect` it answers
 * what reached it, with a status and a header of its own.
 */
const WEBHOOK_SOURCE = `import * as sdk from '@botpress/sdk'
import axios from 'axios'
import * as bp from '.botpress'

const reqBodySchema = sdk.z.object({
  userId: sdk.z.string(),
  conversationId: sdk.z.string(),
  text: sdk.z.string(),
})

/** Tells the test's receiver; a failure is only logged. */
const tell = async (url: string, body: object) => {
  await axios.post(url, body).catch((err) => console.error('could not tell', url, String(err)))
}

export default new bp.Integration({
  register: async ({ ctx, webhookUrl, logger }) => {
    logger.forBot().info(\`registered \${webhookUrl}\`)
    await tell(ctx.configuration.webhookUrl, { kind: 'register', botId: ctx.botId, webhookUrl })
  },
  unregister: async ({ ctx, webhookUrl }) => {
    await tell(ctx.configuration.webhookUrl, { kind: 'unregister', botId: ctx.botId, webhookUrl })
  },
  actions: {
    shout: async ({ input }) => ({ text: input.text.toUpperCase() }),
  },
  channels: {
    webhook: {
      messages: {
        text: async ({ ctx, conversation, user, payload }) => {
          // Not caught: a receiver that fails fails the delivery, which is tried again.
          await axios.post(ctx.configuration.webhookUrl, {
            userId: user.id,
            conversationId: conversation.tags.id,
            text: payload.text,
          })
        },
      },
    },
  },
  handler: async ({ client, req }) => {
    if (req.path.startsWith('/inspect')) {
      return {
        status: 201,
        headers: { 'content-type': 'application/json', 'x-integration': 'webhook-message' },
        body: JSON.stringify({ method: req.method, path: req.path, query: req.query, body: req.body || null }),
      }
    }
    const { body } = req
    if (!body) {
      return { status: 400, body: JSON.stringify({ error: 'No body' }) }
    }
    let parsedBody: unknown
    try {
      parsedBody = JSON.parse(body)
    } catch (thrown) {
      return { status: 400, body: JSON.stringify({ error: 'Invalid JSON Body' }) }
    }
    const parseResult = reqBodySchema.safeParse(parsedBody)
    if (!parseResult.success) {
      return { status: 400, body: JSON.stringify({ error: 'Invalid body' }) }
    }
    const { userId, conversationId, text } = parseResult.data
    const { conversation } = await client.getOrCreateConversation({
      channel: 'webhook',
      tags: { id: conversationId },
    })
    const { user } = await client.getOrCreateUser({ tags: { id: userId } })
    const { message } = await client.createMessage({
      type: 'text',
      conversationId: conversation.id,
      userId: user.id,
      payload: { text },
      tags: {},
    })
    return { status: 200, body: JSON.stringify({ message }) }
  },
})
`;

/**
 * The `hello-world` template, misbehaving: its `register` and `unregister` throw (as the template's
 * do), and its webhook handler hangs, throws or ends its process as the path says.
 */
const UNRULY_SOURCE = `import * as sdk from '@botpress/sdk'
import * as bp from '.botpress'

export default new bp.Integration({
  register: async () => {
    throw new sdk.RuntimeError('Invalid configuration')
  },
  unregister: async () => {
    throw new sdk.RuntimeError('Invalid configuration')
  },
  actions: {
    helloWorld: async (props) => {
      props.logger.forBot().info('Hello World!')
      const name = props.input.name || 'World'
      return { message: \`Hello "\${name}"! Nice to meet you ;)\` }
    },
  },
  channels: {},
  handler: async ({ req }) => {
    if (req.path === '/hang') await new Promise(() => {})
    if (req.path === '/crash') process.exit(1)
    if (req.path === '/throw') throw new Error('boom')
    return { status: 200, body: 'fine' }
  },
})
`;

/**
 * An SDK 0.10 bot that declares the integration in its definition, as a user who did not run `bp add`
 * writes it: an instance with no id, found by name and version when `bp deploy` runs. It answers
 * `shout <text>` with the integration's `shout` action, anything else with `You said: <text>`.
 */
function declaringBot(webhookUrl: string): string {
  return `import { Bot, z } from '@botpress/sdk'

const bot = new Bot({
  integrations: {
    webhook: {
      id: null,
      name: '${NAME}',
      version: '${VERSION}',
      enabled: true,
      configuration: { webhookUrl: '${webhookUrl}' },
    },
  },
  configuration: { schema: z.object({}) },
  states: {},
  events: {},
  recurringEvents: {},
})

bot.message(async ({ message, client, ctx }) => {
  const text = String(message.payload.text ?? '')
  let reply = \`You said: \${text}\`
  if (text.startsWith('shout ')) {
    const { output } = await client.callAction({ type: '${NAME}:shout', input: { text: text.slice(6) } })
    reply = (output as { text: string }).text
  }
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: reply },
  })
})

export default bot
`;
}

/** The projects a suite deploys, made with `bp init`: one set per store, as both suites run at once. */
interface Projects {
  webhook: IntegrationProject;
  unruly: IntegrationProject;
  echo: BotProject;
}
const made: BotProject[] = [];
after(async () => {
  for (const project of made) await project.remove();
});
async function initProjects(): Promise<Projects> {
  const [webhook, unruly, echo] = await Promise.all([
    initIntegrationProject(NAME, 'webhook-message', {
      'integration.definition.ts': WEBHOOK_DEFINITION,
      'src/index.ts': WEBHOOK_SOURCE,
    }),
    initIntegrationProject(UNRULY, 'hello-world', { 'src/index.ts': UNRULY_SOURCE }),
    initBotProject('echo-bot'),
  ]);
  made.push(webhook, unruly, echo);
  return { webhook, unruly, echo };
}

/** What the receiver was posted, parsed. */
interface Post {
  kind?: string;
  botId?: string;
  webhookUrl?: string;
  userId?: string;
  conversationId?: string;
  text?: string;
}

function posts(receiver: WebhookReceiver): Post[] {
  return receiver.received.map((r) => {
    try {
      return JSON.parse(r.body) as Post;
    } catch {
      return {};
    }
  });
}

type Installed = Awaited<ReturnType<Client['getBot']>>['bot']['integrations'][string];

const stores = await testStores();
const noSandbox = await sandboxSkip();
const projectsOf = new Map<string, Projects>();
for (const store of stores) if (!store.skip && !noSandbox) projectsOf.set(store.name, await initProjects());

// The suites of both stores run at once (each test in order in its own): the runner's --test-timeout
// bounds a whole file, and each test builds and deploys with the real CLI and starts processes.
describe('SDK integrations deployed with bp deploy', { concurrency: stores.length }, () => {
  for (const store of stores) {
    describe(store.name, { skip: store.skip ?? noSandbox, concurrency: 1 }, () => {
      const { webhook, unruly, echo } = projectsOf.get(store.name) ?? ({} as Projects);
      let t: TestServer;
      let receiver: WebhookReceiver;
      const sessions: ChatSession[] = [];

      before(async () => {
        // The integrations post to receivers on this machine; a call that hangs ends in 10 s.
        t = await startTestServer(store, {
          webhookPrivateTargets: 'on',
          sdkBotTimeoutSeconds: '10',
          sdkBotPrivateTargets: RECEIVERS,
        });
        receiver = await startReceiver();
      });
      after(async () => {
        for (const s of sessions) await s.close();
        await receiver?.close();
        await t?.close();
      });

      // The first deploy of the webhook integration, once per server (tests that need it share it).
      let firstDeploy: Promise<{ output: string; id: string }> | undefined;
      const deployed = () =>
        (firstDeploy ??= (async () => {
          const output = await deployIntegrationWithBp(t, webhook);
          const { integration } = await t.client().getIntegrationByName({ name: NAME, version: VERSION });
          return { output, id: integration.id };
        })());

      /** A bot key and a Runtime API client acting as the bot. */
      const runtimeOf = async (botId: string) => {
        const { value } = await t.client().createBotApiKey({ botId });
        return t.client({ token: value, botId, workspaceId: undefined });
      };

      /** Installs an integration on a bot as the hosted API does, and answers the installation. */
      const install = async (botId: string, integrationId: string, webhookUrl = receiver.url) => {
        await t.client().updateBot({
          id: botId,
          integrations: { [integrationId]: { enabled: true, configuration: { webhookUrl } } },
        });
        const installed = (await t.client().getBot({ id: botId })).bot.integrations[integrationId];
        assert.ok(
          installed,
          `getBot shows the installation of ${integrationId}: ${JSON.stringify(installed)}`,
        );
        return installed;
      };

      /** A bot running the echo bot of `bp init`, with the webhook integration installed. */
      const echoBotWithIntegration = async (name: string) => {
        const { id } = await deployed();
        const { bot } = await t.client().createBot({ name });
        await deployWithBp(t, echo, bot.id);
        const installed = await install(bot.id, id);
        return { botId: bot.id, installed, runtime: await runtimeOf(bot.id) };
      };

      /** Posts a message of an end user of the external service to the installation's webhook URL. */
      const postIncoming = async (
        installed: Installed,
        body: { userId: string; conversationId: string; text: string },
      ) => {
        const res = await fetch(installed.webhookUrl, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        });
        const text = await res.text();
        assert.equal(res.status, 200, `the integration's answer is relayed: ${res.status} ${text}`);
        return (
          JSON.parse(text) as {
            message: {
              id: string;
              conversationId: string;
              userId: string;
              type: string;
              payload: { text: string };
            };
          }
        ).message;
      };

      /** Waits for the integration to post the bot message `text` to `to` (its channel handler ran). */
      const outgoing = (to: WebhookReceiver, text: string, ms = 30_000) =>
        waitFor(
          `the integration to post "${text}" (posts so far: ${JSON.stringify(posts(to)).slice(0, 2000)})`,
          async () => posts(to).find((p) => p.text === text),
          ms,
          200,
        );

      test(
        'bp deploy of an integration project claims the handle its name carries and creates the integration; a second deploy updates it',
        { timeout: 300_000 },
        async () => {
          const admin = t.client();
          const { output, id } = await deployed();
          assert.match(output, new RegExp(`Handle "${HANDLE}" is now yours`), output);
          assert.match(output, new RegExp(`Deploying integration ${NAME} v${VERSION}`), output);
          assert.match(output, /Integration deployed/, output);

          // The CLI claimed the handle with checkHandleAvailability and updateWorkspace.
          const workspace = await admin.getWorkspace({ id: t.workspaceId });
          assert.equal(workspace.handle, HANDLE);
          const taken = await admin.checkHandleAvailability({ handle: HANDLE });
          assert.equal(taken.available, false, 'a claimed handle is no longer available');
          assert.ok(Array.isArray(taken.suggestions));
          const free = await admin.checkHandleAvailability({ handle: unique('free').toLowerCase() });
          assert.equal(free.available, true);

          // What the definition declared, as the CLI sent it (JSON Schemas of the zod schemas).
          const { integration } = await admin.getIntegration({ id });
          assert.equal(integration.name, NAME);
          assert.equal(integration.version, VERSION);
          assert.deepEqual(Object.keys(integration.actions), ['shout']);
          assert.deepEqual(integration.actions.shout?.input.schema.required, ['text']);
          assert.deepEqual(Object.keys(integration.channels), ['webhook']);
          const channel = integration.channels.webhook as unknown as {
            messages: Record<string, unknown>;
            conversation?: { tags?: Record<string, unknown> };
            message?: { tags?: Record<string, unknown> };
          };
          assert.deepEqual(Object.keys(channel.messages), ['text']);
          // The CLI's update reads `conversation.tags` and `message.tags` of every channel (it fails on
          // "Cannot read properties of undefined (reading 'tags')" without them): both are there.
          assert.deepEqual(Object.keys(channel.conversation?.tags ?? {}), ['id']);
          assert.deepEqual(channel.message?.tags, {}, `channels.webhook: ${JSON.stringify(channel)}`);
          assert.deepEqual(Object.keys((integration.configuration.schema.properties ?? {}) as object), [
            'webhookUrl',
          ]);
          assert.equal(integration.public, false);

          // The same name and version again: the CLI finds it (getIntegrationByName) and updates it.
          const again = await deployIntegrationWithBp(t, webhook);
          assert.match(again, /Integration already exists/, again);
          assert.match(again, /Integration deployed/, again);
          const { integrations } = await admin.listIntegrations({ name: NAME });
          assert.deepEqual(
            integrations.map((i) => [i.id, i.name, i.version]),
            [[id, NAME, VERSION]],
            'still one integration of that name, with its id',
          );
        },
      );

      test('the Admin API keeps a workspace’s integrations; the hub finds none of them unpublished', async () => {
        const admin = t.client();
        await deployed(); // the workspace has its handle
        const name = `${HANDLE}/plain`;
        const { integration: first } = await admin.createIntegration({
          name,
          version: '1.0.0',
          title: 'Plain',
          description: 'An integration with no code',
          actions: {
            ping: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } },
          },
        });
        assert.equal(typeof first.id, 'string');
        assert.equal(first.name, name);
        assert.equal(first.version, '1.0.0');
        assert.equal(first.title, 'Plain');
        assert.deepEqual((await admin.getIntegration({ id: first.id })).integration.id, first.id);
        assert.equal((await admin.getIntegrationByName({ name, version: '1.0.0' })).integration.id, first.id);

        // A name and version are deployed once; a new version is another integration.
        await rejects4xx(admin.createIntegration({ name, version: '1.0.0' }));
        const { integration: second } = await admin.createIntegration({ name, version: '1.1.0' });
        assert.notEqual(second.id, first.id);
        const { integrations } = await admin.listIntegrations({ name });
        assert.deepEqual(integrations.map((i) => i.version).sort(), ['1.0.0', '1.1.0']);

        const { integration: updated } = await admin.updateIntegration({
          id: first.id,
          title: 'Renamed',
          actions: {
            ping: null,
            pong: { input: { schema: { type: 'object' } }, output: { schema: { type: 'object' } } },
          },
        });
        assert.equal(updated.title, 'Renamed');
        assert.deepEqual(Object.keys(updated.actions), ['pong']);

        const { newSigningSecret } = await admin.rotateIntegrationSigningSecrets({ id: first.id });
        assert.equal(typeof newSigningSecret, 'string');
        assert.ok(newSigningSecret.length > 0);
        const rotated = await admin.rotateIntegrationSigningSecrets({ id: first.id });
        assert.notEqual(rotated.newSigningSecret, newSigningSecret);

        // What the CLI's lookups treat as absent: a 404 of type ResourceNotFound.
        await rejectsWith(admin.getIntegrationByName({ name, version: '9.9.9' }), ResourceNotFoundError);
        await rejectsWith(admin.getPublicIntegration({ name, version: '1.0.0' }), ResourceNotFoundError);
        await rejectsWith(
          admin.getPublicIntegration({ name: 'telegram', version: '0.5.0' }),
          ResourceNotFoundError,
        );

        await admin.deleteIntegration({ id: first.id });
        await rejectsWith(admin.getIntegration({ id: first.id }), ResourceNotFoundError);
        assert.deepEqual(
          (await admin.listIntegrations({ name })).integrations.map((i) => i.id),
          [second.id],
        );

        // Setting the handle the workspace has is no change.
        const workspace = await admin.updateWorkspace({ id: t.workspaceId, handle: HANDLE });
        assert.equal(workspace.handle, HANDLE);
      });

      test(
        'an integration of the webhook-message template, installed on the echo bot, carries its conversations both ways and runs its action',
        { timeout: 300_000 },
        async () => {
          const admin = t.client();
          const { id } = await deployed();
          const { botId, installed, runtime } = await echoBotWithIntegration('integration echo');

          // The installation, as getBot shows it.
          assert.equal(installed.id, id);
          assert.equal(installed.name, NAME);
          assert.equal(installed.version, VERSION);
          assert.equal(installed.enabled, true);
          assert.deepEqual(installed.configuration, { webhookUrl: receiver.url });
          assert.equal(typeof installed.webhookId, 'string');
          assert.equal(installed.webhookUrl, `${t.url}/webhooks/${installed.webhookId}`);
          assert.equal(typeof installed.status, 'string');

          // The install sent the integration `register` with the installation's webhook URL.
          const registered = await waitFor(
            'the integration to be registered',
            async () => posts(receiver).find((p) => p.kind === 'register' && p.botId === botId),
            30_000,
            200,
          );
          assert.equal(registered.webhookUrl, installed.webhookUrl);
          await waitFor(
            'the installation to show it is registered',
            async () => (await admin.getBot({ id: botId })).bot.integrations[id]?.status === 'registered',
            30_000,
          );

          // An end user of the external service writes: the integration's handler answers the caller.
          const incoming = await postIncoming(installed, {
            userId: 'u1',
            conversationId: 'c1',
            text: 'hello',
          });
          assert.equal(incoming.type, 'text');
          assert.equal(incoming.payload.text, 'hello');
          const { conversation } = await runtime.getConversation({ id: incoming.conversationId });
          assert.equal(conversation.integration, NAME, 'the conversation is the integration’s');
          assert.equal(conversation.channel, 'webhook');

          // The bot answered it, and its answer went out through the integration's channel.
          const reply = await outgoing(receiver, 'You said: hello');
          assert.equal(reply.conversationId, 'c1', 'the integration saw its own tag of the conversation');
          assert.equal(typeof reply.userId, 'string');
          const { messages } = await runtime.listMessages({ conversationId: incoming.conversationId });
          assert.deepEqual(messages.map((m) => (m.payload as { text: string }).text).sort(), [
            'You said: hello',
            'hello',
          ]);

          // The same external conversation and user are the same conversation and user.
          const next = await postIncoming(installed, {
            userId: 'u1',
            conversationId: 'c1',
            text: 'and again',
          });
          assert.equal(next.conversationId, incoming.conversationId);
          assert.equal(next.userId, incoming.userId);
          await outgoing(receiver, 'You said: and again');
          const other = await postIncoming(installed, {
            userId: 'u2',
            conversationId: 'c2',
            text: 'elsewhere',
          });
          assert.notEqual(other.conversationId, incoming.conversationId);
          assert.equal((await outgoing(receiver, 'You said: elsewhere')).conversationId, 'c2');

          // The integration's action, called with a bot key as bot code calls it.
          const { output } = await runtime.callAction({ type: `${NAME}:shout`, input: { text: 'hi there' } });
          assert.deepEqual(output, { text: 'HI THERE' });
          await rejects4xx(runtime.callAction({ type: `${NAME}:whisper`, input: { text: 'hi' } }));

          // A delivery that fails (the receiver answers 500: the channel handler throws) is tried again.
          const flaky = await startReceiver(500);
          try {
            await install(botId, id, flaky.url);
            await postIncoming(installed, { userId: 'u1', conversationId: 'c1', text: 'try me' });
            await outgoing(flaky, 'You said: try me');
            flaky.status = 200;
            // SDK 0.10 answers any throw of a handler with a 400 (type Runtime): a failure all the same.
            await waitFor(
              'the delivery to be tried again',
              async () => posts(flaky).filter((p) => p.text === 'You said: try me').length >= 2,
              30_000,
              250,
            );
          } finally {
            await flaky.close();
          }
        },
      );

      test(
        'an installation’s webhook URL hands the integration any method and sub-path, and relays its answer',
        { timeout: 300_000 },
        async () => {
          const { id } = await deployed();
          // Relaying needs no bot code: a bot with the integration installed is enough.
          const { bot } = await t.client().createBot({ name: 'integration inspect' });
          const installed = await install(bot.id, id);

          const got = await fetch(`${installed.webhookUrl}/inspect/deep/path?x=1&y=two`);
          assert.equal(got.status, 201, await got.clone().text());
          assert.equal(got.headers.get('x-integration'), 'webhook-message');
          assert.deepEqual(await got.json(), {
            method: 'GET',
            path: '/inspect/deep/path',
            query: 'x=1&y=two',
            body: null,
          });

          const put = await fetch(`${installed.webhookUrl}/inspect`, {
            method: 'PUT',
            headers: { 'content-type': 'text/plain' },
            body: 'raw body',
          });
          assert.equal(put.status, 201);
          assert.deepEqual(await put.json(), {
            method: 'PUT',
            path: '/inspect',
            query: '',
            body: 'raw body',
          });

          // The template's own validation answers are relayed as they are.
          const bad = await fetch(installed.webhookUrl, { method: 'POST', body: '{"nope":true}' });
          assert.equal(bad.status, 400);
          assert.deepEqual(await bad.json(), { error: 'Invalid body' });

          // A webhook id nobody has is not found.
          const unknown = await fetch(`${t.url}/webhooks/${randomUUID()}`, { method: 'POST', body: '{}' });
          assert.equal(unknown.status, 404);
        },
      );

      test(
        'installing an unknown integration applies nothing; null uninstalls, sending `unregister`',
        { timeout: 300_000 },
        async () => {
          const admin = t.client();
          const { id } = await deployed();
          const { bot } = await admin.createBot({ name: 'integration installs' });
          const missing = unknownId('intver');

          const err = await rejects4xx(
            admin.updateBot({
              id: bot.id,
              name: 'renamed',
              integrations: {
                [id]: { enabled: true, configuration: { webhookUrl: receiver.url } },
                [missing]: { enabled: true, configuration: {} },
              },
            }),
          );
          assert.match(
            (err as unknown as Error).message,
            new RegExp(missing),
            'the error names the unknown integration',
          );
          const untouched = (await admin.getBot({ id: bot.id })).bot;
          assert.equal(untouched.name, 'integration installs', 'nothing of the update was applied');
          assert.equal(untouched.integrations[id], undefined);

          const installed = await install(bot.id, id);
          await waitFor(
            'the integration to be registered',
            async () => posts(receiver).find((p) => p.kind === 'register' && p.botId === bot.id),
            30_000,
            200,
          );
          await admin.updateBot({ id: bot.id, integrations: { [id]: null } });
          assert.equal(
            (await admin.getBot({ id: bot.id })).bot.integrations[id],
            undefined,
            'null uninstalls',
          );
          const unregistered = await waitFor(
            'the integration to be unregistered',
            async () => posts(receiver).find((p) => p.kind === 'unregister' && p.botId === bot.id),
            30_000,
            200,
          );
          assert.equal(unregistered.webhookUrl, installed.webhookUrl);
          const gone = await fetch(installed.webhookUrl, { method: 'POST', body: '{}' });
          assert.equal(gone.status, 404, 'the webhook URL of a removed installation is gone');
        },
      );

      test(
        'a bot that declares the integration in its definition has it installed by bp deploy, and calls its action',
        { timeout: 300_000 },
        async () => {
          const admin = t.client();
          const { id } = await deployed();
          const own = await startReceiver();
          const declaring = await initBotProject('declaring-bot', declaringBot(own.url));
          made.push(declaring);
          try {
            const { bot } = await admin.createBot({ name: 'integration declared' });
            // The CLI looks the integration up by name and version and sends it keyed by its id.
            const output = await deployWithBp(t, declaring, bot.id);
            assert.match(output, /Bot deployed/);
            const installed = (await admin.getBot({ id: bot.id })).bot.integrations[id];
            assert.ok(installed, `bp deploy installed the integration: ${output}`);
            assert.deepEqual(installed.configuration, { webhookUrl: own.url });
            assert.ok(output.includes(installed.webhookUrl), `bp deploy printed the webhook URL: ${output}`);
            await waitFor(
              'the integration to be registered',
              async () => posts(own).find((p) => p.kind === 'register' && p.botId === bot.id),
              30_000,
              200,
            );

            // Bot code calls the integration's action.
            const session = await ChatSession.open(await chatUrlOf(t, bot.id));
            sessions.push(session);
            await session.say('shout make some noise');
            assert.deepEqual(await session.nextTexts(1, 30_000), ['MAKE SOME NOISE']);
            await session.say('hello');
            assert.deepEqual(await session.nextTexts(1), ['You said: hello']);
            assert.deepEqual(
              posts(own).filter((p) => p.text !== undefined),
              [],
              'a chat conversation’s messages do not go out through the integration',
            );

            // Deploying a project that does not declare it any more uninstalls it (the CLI sends null).
            await deployWithBp(t, echo, bot.id);
            assert.equal((await admin.getBot({ id: bot.id })).bot.integrations[id], undefined);
            await waitFor(
              'the integration to be unregistered',
              async () => posts(own).find((p) => p.kind === 'unregister' && p.botId === bot.id),
              30_000,
              200,
            );
          } finally {
            await own.close();
          }
        },
      );

      test(
        'an integration that fails to register, hangs, throws or exits harms only its own calls',
        { timeout: 400_000 },
        async () => {
          const admin = t.client();
          await deployed(); // the workspace has its handle
          const output = await deployIntegrationWithBp(t, unruly);
          assert.match(output, /Integration deployed/, output);
          const { integration } = await admin.getIntegrationByName({ name: UNRULY, version: VERSION });
          const { bot } = await admin.createBot({ name: 'integration unruly' });

          // A register that throws leaves the installation in place, with the failure in its status.
          const installed = await install(bot.id, integration.id);
          const failed = await waitFor(
            'the installation to show its failed register',
            async () => {
              const found = (await admin.getBot({ id: bot.id })).bot.integrations[integration.id];
              return found?.status === 'registration_failed' && found;
            },
            30_000,
            250,
          );
          assert.match(failed.statusReason ?? '', /Invalid configuration/);

          // Its action runs all the same.
          const runtime = await runtimeOf(bot.id);
          const { output: hello } = await runtime.callAction({
            type: `${UNRULY}:helloWorld`,
            input: { name: 'Parley' },
          });
          assert.deepEqual(hello, { message: 'Hello "Parley"! Nice to meet you ;)' });

          const call = (path: string) =>
            fetch(`${installed.webhookUrl}${path}`, {
              method: 'POST',
              body: '{}',
              signal: AbortSignal.timeout(60_000),
            });
          assert.equal((await call('/')).status, 200);

          // A handler that throws: the SDK answers its error (a 400 of type Runtime), which is relayed.
          const thrown = await call('/throw');
          assert.equal(thrown.status, 400);
          assert.equal(((await thrown.json()) as { type: string }).type, 'Runtime');

          // A handler that never answers: the caller gets a 5xx (a 504) in time; the server answers meanwhile.
          const hanging = call('/hang');
          const health = await fetch(`${t.url}/healthz`);
          assert.equal(health.status, 200);
          assert.ok((await hanging).status >= 500, 'a hung handler answers a 5xx');

          // A process that exits: a 5xx, and the next request is handled by a new one.
          const crashed = await call('/crash');
          assert.ok(crashed.status >= 500, `an exited process answers a 5xx (${crashed.status})`);
          await waitFor(
            'the integration to answer again',
            async () => (await call('/')).status === 200,
            30_000,
            500,
          );
          assert.equal((await fetch(`${t.url}/healthz`)).status, 200);

          // An unregister that throws still uninstalls.
          await admin.updateBot({ id: bot.id, integrations: { [integration.id]: null } });
          assert.equal((await admin.getBot({ id: bot.id })).bot.integrations[integration.id], undefined);
        },
      );
    });
  }
});
