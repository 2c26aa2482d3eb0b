// A failed turn leaves the visitor a message instead of silence: the bot's fallback message, on by
// default, switched off or reworded in its chat configuration, sent once per event given up, and never
// for a try that a later one redeems. Through the official chat client, on both stores.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DEFAULT_FALLBACK_TEXT } from '../src/domain/chat/fallback-message.ts';
import { chatServer, textOf, turnOutcome } from './helpers/chat-bots.ts';
import type { ChatSession } from './helpers/chat-bots.ts';
import { deployPackage } from './helpers/deployed-bots.ts';
import type { DeployedBot } from './helpers/deployed-bots.ts';
import { withoutTable } from './helpers/store-failure.ts';
import { testStores } from './helpers/stores.ts';
import { TURNS_BOT } from './helpers/turns-bot.ts';

/** What the bot's code throws on "boom": the visitor must never read it. */
const ERROR_TEXT = 'boom was said';

for (const store of await testStores()) {
  describe(`the fallback message of a failed turn (${store.name})`, { skip: store.skip }, () => {
    const s = chatServer(store, 'parley-fallback-');
    let bot: DeployedBot;

    /** A new visitor says `text`; answers the session, once the turn of its message has ended as `status`. */
    const visit = async (text: string, status: string): Promise<ChatSession> => {
      bot ??= await deployPackage(s.t, TURNS_BOT);
      const session = await s.talk(bot.webhookUrl);
      const messageId = await session.say(text);
      assert.equal((await turnOutcome(bot.client, messageId, 20_000)).status, status);
      return session;
    };
    const setFallback = (fallbackMessage: { enabled: boolean; text?: string } | null) =>
      s.t
        .client()
        .updateBot({ id: bot.botId, integrations: { chat: { configuration: { fallbackMessage } } } });

    /** Every text of the conversation, the visitor's and the bot's, in order. */
    const transcript = async (session: ChatSession) =>
      (await session.history()).map(
        (m) => `${m.userId === session.client.user.id ? 'user' : 'bot'}: ${textOf(m)}`,
      );

    test('on by default: a turn whose code throws leaves the visitor the default text, never the error', async () => {
      const session = await visit('boom', 'failed');
      assert.deepEqual(await session.nextTexts(1), [DEFAULT_FALLBACK_TEXT]);
      assert.deepEqual(await transcript(session), ['user: boom', `bot: ${DEFAULT_FALLBACK_TEXT}`]);
      assert.ok(!JSON.stringify(await session.history()).includes(ERROR_TEXT), 'the error stays out');
      // Not in the configuration until it is set: the default is the server's.
      const { bot: read } = await s.t.client().getBot({ id: bot.botId });
      assert.equal(read.integrations.chat?.configuration.fallbackMessage, undefined);
      // The conversation goes on: the next message is answered as usual.
      await session.say('again');
      assert.deepEqual(await session.nextTexts(1), ['You said: again']);
    });

    test('a text of its own, read back in the configuration', async () => {
      await setFallback({ enabled: true, text: 'Our assistant tripped. A person will write to you.' });
      const { bot: read } = await s.t.client().getBot({ id: bot.botId });
      assert.deepEqual(read.integrations.chat?.configuration.fallbackMessage, {
        enabled: true,
        text: 'Our assistant tripped. A person will write to you.',
      });
      const session = await visit('boom', 'failed');
      assert.deepEqual(await transcript(session), [
        'user: boom',
        'bot: Our assistant tripped. A person will write to you.',
      ]);
    });

    test('switched off: the failed turn says nothing', async () => {
      await setFallback({ enabled: false });
      const session = await visit('boom', 'failed');
      // The next turn's reply is the first the visitor gets: nothing came between.
      await session.say('still there?');
      assert.deepEqual(await session.nextTexts(1), ['You said: still there?']);
      assert.deepEqual(await transcript(session), [
        'user: boom',
        'user: still there?',
        'bot: You said: still there?',
      ]);
      await setFallback(null);
      const { bot: read } = await s.t.client().getBot({ id: bot.botId });
      assert.equal(
        read.integrations.chat?.configuration.fallbackMessage,
        undefined,
        'null: the default again',
      );
    });

    test('a turn tried again that then succeeds leaves only its reply', async () => {
      bot ??= await deployPackage(s.t, TURNS_BOT);
      const session = await s.talk(bot.webhookUrl);
      // The turn cannot read the conversation's variables: a fault that may pass, so it is tried again.
      const messageId = await withoutTable(s.t, 'states', async () => {
        const id = await session.say('patience');
        await waitForRetry(bot, id);
        return id;
      });
      assert.equal((await turnOutcome(bot.client, messageId, 20_000)).status, 'processed');
      assert.deepEqual(await session.nextTexts(1), ['You said: patience']);
      assert.deepEqual(await transcript(session), ['user: patience', 'bot: You said: patience']);
    });

    test('the setting is checked: a text too long or an unknown field is refused, naming the field', async () => {
      bot ??= await deployPackage(s.t, TURNS_BOT);
      for (const fallbackMessage of [
        { enabled: true, text: 'x'.repeat(1001) },
        { enabled: true, tone: 'warm' },
      ]) {
        const res = await fetch(`${s.t.url}/v1/admin/bots/${bot.botId}`, {
          method: 'PUT',
          headers: {
            authorization: `Bearer ${s.t.token}`,
            'x-workspace-id': s.t.workspaceId,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ integrations: { chat: { configuration: { fallbackMessage } } } }),
        });
        assert.equal(res.status, 400);
        const body = (await res.json()) as { message: string };
        assert.match(body.message, /integrations\.chat\.configuration\.fallbackMessage/);
      }
    });
  });
}

/** Waits until the event of message `messageId` has failed once and waits to be tried again. */
async function waitForRetry(bot: DeployedBot, messageId: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const { events } = await bot.client.listEvents({ messageId });
    const event = events.find((e) => e.type === 'message_created');
    if (event?.status === 'pending' && event.failureReason) return;
    assert.ok(
      event?.status !== 'failed' && event?.status !== 'processed',
      `the turn ended: ${event?.status}`,
    );
    if (Date.now() > deadline) assert.fail('the turn was not tried again within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
