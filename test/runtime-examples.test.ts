import assert from 'node:assert/strict';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { InvalidPayloadError, ResourceNotFoundError } from '@botpress/client';
import type { Client } from '@botpress/client';
import { ChatSession, deployWithCli, textOf, turnOutcome } from './helpers/chat-bots.ts';
import type { ChatMessage } from './helpers/chat-bots.ts';
import { rejectsWith, waitFor } from './helpers/runtime.ts';
import { startTestServer } from './helpers/server.ts';
import type { TestServer } from './helpers/server.ts';
import { testStores } from './helpers/stores.ts';

const MENU_OPTIONS = [
  { label: 'FAQ', value: 'faq' },
  { label: 'Tell you my name', value: 'name' },
  { label: 'Bye', value: 'bye' },
];
const MENU = { type: 'choice', text: 'What would you like to do?', options: MENU_OPTIONS };

/** The payloads of some messages, as the chat client received them. */
const payloads = (messages: ChatMessage[]) => messages.map((m) => m.payload);

for (const store of await testStores()) {
  describe(`the example bots, deployed with parley deploy (${store.name})`, { skip: store.skip }, () => {
    let t: TestServer;
    let tmp: string;
    const sessions: ChatSession[] = [];
    before(async () => {
      t = await startTestServer(store);
      tmp = await mkdtemp(path.join(os.tmpdir(), 'parley-examples-'));
    });
    after(async () => {
      for (const session of sessions) await session.close();
      await t.close();
      await rm(tmp, { recursive: true, force: true });
    });

    /** A new chat user (or the one of `userKey`) in a new conversation with the bot, listening. */
    async function talk(webhookUrl: string, userKey?: string): Promise<ChatSession> {
      const session = await ChatSession.open(webhookUrl, userKey === undefined ? {} : { userKey });
      sessions.push(session);
      return session;
    }

    /** The Runtime API as the bot (the owner's token and x-bot-id). */
    const runtime = (botId: string): Client => t.client({ botId });

    /** Waits until the turn of a chat message is over, and asserts how it ended. */
    async function expectTurn(botId: string, messageId: string, status: string): Promise<void> {
      const outcome = await turnOutcome(runtime(botId), messageId);
      assert.equal(outcome.status, status, `the turn ended ${outcome.status}: ${outcome.failureReason}`);
    }

    async function variables(botId: string, type: 'conversation' | 'user' | 'bot', id: string) {
      const { state } = await runtime(botId).getState({ type, id, name: 'variables' });
      return state.payload;
    }

    describe('echo-bot', () => {
      let botId: string;
      let webhookUrl: string;
      before(async () => {
        const deployed = await deployWithCli(t, 'examples/echo-bot');
        ({ botId, webhookUrl } = deployed);
        assert.match(deployed.output, new RegExp(`^Created and deployed echo-bot: bot ${botId}$`, 'm'));
        const { bot } = await t.client().getBot({ id: botId });
        assert.equal(webhookUrl, bot.integrations.chat?.webhookUrl, 'the printed chat URL is the bot’s');
      });

      test('answers text with "You said: <text>" and any other message with a text that says so, over SSE', async () => {
        const s = await talk(webhookUrl);
        const hello = await s.say('hello');
        const [reply] = await s.nextReplies(1);
        assert.deepEqual(reply?.payload, { type: 'text', text: 'You said: hello' });
        assert.equal(reply?.isBot, true);
        assert.equal(reply?.userId, botId, 'the reply is from the bot');
        assert.equal(reply?.conversationId, s.conversationId);
        await expectTurn(botId, hello, 'processed');

        const image = { type: 'image', imageUrl: 'https://example.com/cat.png' };
        const location = { type: 'location', latitude: 45.5, longitude: -73.56, address: 'Montréal' };
        const card = {
          type: 'card',
          title: 'A card',
          subtitle: 'with a button',
          imageUrl: 'https://example.com/card.png',
          actions: [{ action: 'postback', label: 'Press', value: 'pressed' }],
        };
        for (const payload of [image, location, card]) await s.send(payload);
        const notText = (await s.nextTexts(3)).map(
          (text) => /only understand text messages, not (\w+) ones/.exec(text)?.[1],
        );
        assert.deepEqual(notText, ['image', 'location', 'card']);
        await s.say('bye');
        assert.deepEqual(await s.nextTexts(1), ['You said: bye']);
        // The user's own messages come over the same stream, as not from the bot.
        assert.deepEqual(payloads(s.received.filter((m) => !m.isBot)), [
          { type: 'text', text: 'hello' },
          image,
          location,
          card,
          { type: 'text', text: 'bye' },
        ]);
        assert.deepEqual(s.errors, []);
      });

      test('a blank text gets no reply: the before_incoming_message hook stops it', async () => {
        const s = await talk(webhookUrl);
        const blank = await s.say('   ');
        await expectTurn(botId, blank, 'ignored');
        const later = await s.say('after the blank');
        assert.deepEqual(await s.nextTexts(1), ['You said: after the blank'], 'nothing came in between');
        await expectTurn(botId, later, 'processed');
        assert.deepEqual(s.unread(), []);
        const { logs } = await t.client().getBotLogs({ id: botId, timeStart: new Date(0).toISOString() });
        assert.ok(
          logs.some((l) => l.message === 'ignored a blank message'),
          'the hook’s console line is in the bot’s logs',
        );
      });

      test('turns of one conversation run one at a time, in arrival order: ten quick messages, ten replies in order', async () => {
        const s = await talk(webhookUrl);
        const sent = Array.from({ length: 10 }, (_, i) => `message ${i}`);
        const ids: string[] = [];
        for (const text of sent) ids.push(await s.say(text));
        assert.deepEqual(
          await s.nextTexts(10),
          sent.map((text) => `You said: ${text}`),
        );
        for (const id of ids) await expectTurn(botId, id, 'processed');
        assert.deepEqual(s.unread(), [], 'one reply per message');
      });

      test('two conversations interleaved both get all their replies, each in its order', async () => {
        const a = await talk(webhookUrl);
        const b = await talk(webhookUrl);
        for (let i = 0; i < 5; i++) {
          await a.say(`a${i}`);
          await b.say(`b${i}`);
        }
        const expected = (p: string) => Array.from({ length: 5 }, (_, i) => `You said: ${p}${i}`);
        assert.deepEqual(await a.nextTexts(5), expected('a'));
        assert.deepEqual(await b.nextTexts(5), expected('b'));
        const last = await a.say('done');
        assert.deepEqual(await a.nextTexts(1), ['You said: done']);
        await expectTurn(botId, last, 'processed');
        assert.deepEqual([a.unread(), b.unread()], [[], []]);
      });
    });

    test('turns of one conversation never overlap, while another conversation is answered in parallel', async () => {
      // Each turn of slow-cards: 'one', 1.5 s of code, 'two', 1.5 s of code, 'three'.
      const { botId, webhookUrl } = await deployWithCli(t, 'test/fixtures/slow-cards');
      const busy = await talk(webhookUrl);
      const other = await talk(webhookUrl);
      const first = await busy.say('first');
      const second = await busy.say('second');
      assert.deepEqual(await busy.nextTexts(1), ['one']);
      // The first turn now works for 1.5 s before 'two'; the second waits for it to end.
      const third = await other.say('go');
      assert.deepEqual(await other.nextTexts(1), ['one']);
      assert.deepEqual(
        busy.botReplies().map(textOf),
        ['one'],
        'the other conversation was answered while the first turn was still working',
      );
      assert.deepEqual(await other.nextTexts(2, 15_000), ['two', 'three']);
      assert.deepEqual(
        await busy.nextTexts(5, 15_000),
        ['two', 'three', 'one', 'two', 'three'],
        'the second message’s turn started after the first one’s ended',
      );
      for (const id of [first, second, third]) await expectTurn(botId, id, 'processed');
      assert.deepEqual([busy.unread(), other.unread()], [[], []]);
    });

    test('messages of one conversation sent at once are answered one turn after another', async () => {
      // Stored by concurrent requests: each claimed for a turn only once the one before it has ended.
      const { botId, webhookUrl } = await deployWithCli(t, 'test/fixtures/slow-cards');
      const busy = await talk(webhookUrl);
      const sent = await Promise.all(['a', 'b', 'c'].map((text) => busy.say(text)));
      assert.deepEqual(
        await busy.nextTexts(9, 30_000),
        ['one', 'two', 'three', 'one', 'two', 'three', 'one', 'two', 'three'],
        'no turn began before the one before it ended',
      );
      for (const id of sent) await expectTurn(botId, id, 'processed');
    });

    test('an event of a conversation scheduled before a message, firing during its turn, waits for the turn to end', async () => {
      const { botId, webhookUrl } = await deployWithCli(t, 'test/fixtures/slow-cards');
      const busy = await talk(webhookUrl);
      const bot = runtime(botId);
      const first = await busy.say('first');
      await expectTurn(botId, first, 'processed');
      const { conversationId } = (await bot.getMessage({ id: first })).message;
      // Older than the message (queued before it), but pending only once it fires, a second into the turn.
      const { event: reminder } = await bot.createEvent({
        type: 'reminder',
        payload: {},
        conversationId,
        schedule: { delay: 1000 },
      });
      const said = await busy.say('a');
      // When each is seen to end, by one poll of both.
      let turnEnded: number | undefined;
      let reminderEnded: number | undefined;
      await waitFor(
        'the turn and the reminder to end',
        async () => {
          const [{ events }, { event }] = await Promise.all([
            bot.listEvents({ messageId: said }),
            bot.getEvent({ id: reminder.id }),
          ]);
          const turn = events.find((e) => e.type === 'message_created');
          if (turn && turn.status !== 'pending') turnEnded ??= Date.now();
          if (event.status !== 'pending' && event.status !== 'scheduled') reminderEnded ??= Date.now();
          return turnEnded !== undefined && reminderEnded !== undefined;
        },
        20_000,
        25,
      );
      assert.ok(
        (reminderEnded ?? 0) >= (turnEnded ?? Infinity),
        `the reminder ended ${(turnEnded ?? 0) - (reminderEnded ?? 0)} ms before the turn it fired in`,
      );
    });

    test('menu-bot: the whole flow of its README, with variables of every scope stored as states', async () => {
      const { botId, webhookUrl } = await deployWithCli(t, 'examples/menu-bot');
      const timeStart = new Date(Date.now() - 1000).toISOString();
      const s = await talk(webhookUrl);
      const first = await s.say('hi');
      assert.deepEqual(payloads(await s.nextReplies(2)), [
        { type: 'text', text: 'Welcome to Parley Inc.! This is visit 1.' },
        MENU,
      ]);
      const { message } = await runtime(botId).getMessage({ id: first });
      const conversationId = message.conversationId;
      const userId = message.userId;

      // FAQ: a sub-workflow captures a question, answers it, and returns to the menu.
      await s.say('FAQ');
      assert.deepEqual(await s.nextTexts(1), ['Ask me about our hours, prices or how to contact us.']);
      await s.say('what are your hours?');
      assert.deepEqual(payloads(await s.nextReplies(2)), [
        { type: 'text', text: 'We are open from 9:00 to 17:00, Monday to Friday.' },
        MENU,
      ]);

      // A name, kept in the user's variables.
      await s.say('Tell you my name');
      assert.deepEqual(await s.nextTexts(1), ['What is your name?']);
      await s.say('Ada');
      assert.deepEqual(payloads(await s.nextReplies(2)), [
        { type: 'text', text: 'Nice to meet you, Ada.' },
        MENU,
      ]);

      // Not a choice: the retry message offers the choices again.
      await s.say('Dance');
      assert.deepEqual(payloads(await s.nextReplies(1)), [
        { type: 'choice', text: 'Please pick one of the options.', options: MENU_OPTIONS },
      ]);

      const bye = await s.say('Bye');
      assert.deepEqual(await s.nextTexts(1), ['Goodbye!']);
      await expectTurn(botId, bye, 'processed');
      assert.deepEqual(s.unread(), [], 'the end node ends the conversation: nothing follows Goodbye!');
      assert.equal((await variables(botId, 'conversation', conversationId)).visits, 1);
      assert.equal((await variables(botId, 'user', userId)).name, 'Ada');
      assert.equal((await variables(botId, 'bot', botId)).conversationsStarted, 1);

      // A later message starts over: a second visit, and the bot remembers the user's name.
      const hello = await s.say('hello again');
      assert.deepEqual(payloads(await s.nextReplies(2)), [
        { type: 'text', text: 'Welcome to Parley Inc., Ada! This is visit 2.' },
        MENU,
      ]);
      // The variables are stored when the turn ends, which may be after its replies arrive.
      await expectTurn(botId, hello, 'processed');
      assert.equal((await variables(botId, 'conversation', conversationId)).visits, 2);
      assert.equal((await variables(botId, 'bot', botId)).conversationsStarted, 1);

      // Another conversation of the same user: the user's name is there, the visits are the conversation's.
      const again = await talk(webhookUrl, s.userKey);
      const hiAgain = await again.say('hi');
      assert.deepEqual(payloads(await again.nextReplies(2)), [
        { type: 'text', text: 'Welcome to Parley Inc., Ada! This is visit 1.' },
        MENU,
      ]);
      await expectTurn(botId, hiAgain, 'processed');
      assert.equal((await variables(botId, 'bot', botId)).conversationsStarted, 2);

      // The after_turn_end hook logs every turn.
      await waitFor('the after_turn_end hook’s line in the bot’s logs', async () => {
        const { logs } = await t.client().getBotLogs({ id: botId, timeStart });
        return logs.some((l) => l.message === 'turn done: visit 2, choice ""');
      });
    });

    test('action-bot: a message runs the action from a card; callAction runs it, caches it and checks it', async () => {
      const { botId, webhookUrl } = await deployWithCli(t, 'examples/action-bot');
      const timeStart = new Date(Date.now() - 1000).toISOString();
      const s = await talk(webhookUrl);
      const said = await s.say('Parley runs bots well');
      assert.deepEqual(await s.nextTexts(1), ['4 words, 21 characters; the longest word is "Parley".']);
      await expectTurn(botId, said, 'processed');

      const client = runtime(botId);
      const input = { text: 'hello big world' };
      const output = { words: 3, characters: 15, longest: 'hello' };
      assert.deepEqual(await client.callAction({ type: 'textStats', input }), {
        output,
        meta: { cached: false },
      });
      assert.deepEqual(await client.callAction({ type: 'textStats', input }), {
        output,
        meta: { cached: true },
      });
      // The card's call of the same version filled the cache too.
      assert.deepEqual(
        await client.callAction({ type: 'textStats', input: { text: 'Parley runs bots well' } }),
        {
          output: { words: 4, characters: 21, longest: 'Parley' },
          meta: { cached: true },
        },
      );

      await rejectsWith(client.callAction({ type: 'textStats', input: { text: 5 } }), InvalidPayloadError);
      await rejectsWith(client.callAction({ type: 'noSuchAction', input: {} }), ResourceNotFoundError);

      // The action's console line: once from the card's turn (4 words), once from the uncached call (3 words).
      const logs = await waitFor('the action’s console lines in the bot’s logs', async () => {
        const { logs } = await t.client().getBotLogs({ id: botId, timeStart });
        return logs.some((l) => l.message === 'textStats: 3 words') ? logs : undefined;
      });
      const lines = logs.filter((l) => l.message.startsWith('textStats:'));
      assert.deepEqual(lines.map((l) => [l.level, l.message]).sort(), [
        ['info', 'textStats: 3 words'],
        ['info', 'textStats: 4 words'],
      ]);
    });

    test('a deploy replaces the running version without dropping the conversations in progress', async () => {
      const dir = path.join(tmp, 'menu-bot');
      await cp('examples/menu-bot', dir, { recursive: true });
      const { botId, webhookUrl } = await deployWithCli(t, dir);

      // One conversation waits at the menu, another in the FAQ sub-workflow.
      const atMenu = await talk(webhookUrl);
      await atMenu.say('hi');
      assert.deepEqual(payloads(await atMenu.nextReplies(2)), [
        { type: 'text', text: 'Welcome to Parley Inc.! This is visit 1.' },
        MENU,
      ]);
      const inFaq = await talk(webhookUrl);
      await inFaq.say('hi');
      await inFaq.nextReplies(2);
      await inFaq.say('faq');
      assert.deepEqual(await inFaq.nextTexts(1), ['Ask me about our hours, prices or how to contact us.']);

      // A new version with another greeting.
      const main = path.join(dir, 'workflows/main.json');
      const text = await readFile(main, 'utf8');
      assert.ok(text.includes('Welcome to {{ env.COMPANY }}'));
      await writeFile(main, text.replace('Welcome to {{ env.COMPANY }}', 'Hello from {{ env.COMPANY }}'));
      const before = (await t.client().getBot({ id: botId })).bot.deployedAt;
      const redeployed = await deployWithCli(t, dir, ['--bot-id', botId]);
      assert.equal(redeployed.botId, botId);
      assert.match(redeployed.output, new RegExp(`^Deployed menu-bot: bot ${botId}$`, 'm'));
      assert.notEqual((await t.client().getBot({ id: botId })).bot.deployedAt, before);

      // Both dialogs continue where they stood.
      const bye = await atMenu.say('Bye');
      assert.deepEqual(await atMenu.nextTexts(1), ['Goodbye!']);
      await expectTurn(botId, bye, 'processed');
      await inFaq.say('How do I contact you?');
      assert.deepEqual(payloads(await inFaq.nextReplies(2)), [
        { type: 'text', text: 'Write to hello@example.com.' },
        MENU,
      ]);

      // And the new version runs: the next dialog greets with the new text.
      await atMenu.say('hi again');
      assert.deepEqual(payloads(await atMenu.nextReplies(2)), [
        { type: 'text', text: 'Hello from Parley Inc.! This is visit 2.' },
        MENU,
      ]);
      const fresh = await talk(webhookUrl);
      await fresh.say('hi');
      assert.deepEqual(await fresh.nextTexts(1), ['Hello from Parley Inc.! This is visit 1.']);
    });
  });
}
