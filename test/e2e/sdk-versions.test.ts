// A hello bot written with each published release of `@botpress/sdk` since 1.x runs on Parley: built as
// `bp build` builds it, deployed as `bp deploy` does (createBot with its code and its declared action),
// talked to with the official chat client, and its action called with the official client.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { chatUrlOf } from '../helpers/bp-cli.ts';
import { ChatSession } from '../helpers/chat-bots.ts';
import { sandboxSkip } from '../helpers/sandbox.ts';
import { SDK_RELEASES, sdkBundle } from '../helpers/sdk-versions.ts';
import type { SdkRelease } from '../helpers/sdk-versions.ts';
import { startTestServer } from '../helpers/server.ts';
import type { TestServer } from '../helpers/server.ts';
import { testStores } from '../helpers/stores.ts';

const noSandbox = await sandboxSkip();
const RELEASES = Object.keys(SDK_RELEASES) as SdkRelease[];

/**
 * The bot's `src/index`: one action and a message handler, registered the way the release offers it
 * (`bot.message` until 1.x, `bot.on.message('*')` since 2.x).
 */
const helloBot = (release: string) => `import * as sdk from '@botpress/sdk'

const bot = new sdk.Bot({
  actions: {
    hello: async ({ input }) => ({ text: 'hello ' + input.name + ' from ${release}' }),
  },
  plugins: {},
})

const answer = async ({ message, client, ctx }) => {
  await client.createMessage({
    conversationId: message.conversationId,
    userId: ctx.botId,
    tags: {},
    type: 'text',
    payload: { text: '${release}: ' + message.payload.text },
  })
}
if (bot.on && bot.on.message) bot.on.message('*', answer)
else bot.message(answer)

export default bot
`;

const objectSchema = (name: string) => ({
  schema: { type: 'object', properties: { [name]: { type: 'string' } }, required: [name] },
});

for (const store of await testStores()) {
  describe(`SDK releases 1.x to 7.x (${store.name})`, { skip: store.skip ?? noSandbox }, () => {
    let t: TestServer;
    const sessions: ChatSession[] = [];
    before(async () => {
      t = await startTestServer(store);
    });
    after(async () => {
      for (const session of sessions) await session.close();
      await t?.close();
    });

    for (const release of RELEASES) {
      test(`SDK ${release}: a hello bot answers a chat message and its action`, async () => {
        const { bot } = await t.client().createBot({
          name: `hello sdk ${release}`,
          code: await sdkBundle(release, helloBot(release)),
          actions: { hello: { input: objectSchema('name'), output: objectSchema('text') } },
        });
        const session = await ChatSession.open(await chatUrlOf(t, bot.id));
        sessions.push(session);
        await session.say('hi');
        assert.deepEqual(await session.nextTexts(1, 30_000), [`${release}: hi`]);

        const { output } = await t.client({ botId: bot.id }).callAction({
          type: 'hello',
          input: { name: 'Ada' },
        });
        assert.deepEqual(output, { text: `hello Ada from ${release}` });
      });
    }
  });
}
